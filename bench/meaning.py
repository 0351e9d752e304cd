"""The labelled development set (``tests/data/meaning/``) and what is measured on it: how often the
nearest cards are on the note's topic, per embedding model, through the card path of the app (each note
analysed into a card by the embedded provider, then embedded as cards are: title, summary, tags, text).

Used by ``bench.calibrate`` (the tune part only), ``bench.bench_meaning`` (the held-out part) and the
tests of both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from san_desktop.ai.base import DEFAULT_CATEGORIES, embedding_text
from san_desktop.ai.calibration import TARGET_PRECISION, Calibration
from san_desktop.ai.local import LocalProvider, hashed_embed
from san_desktop.services.cards import SIMILAR_LIMIT

DEVSET = Path(__file__).resolve().parent.parent / "tests" / "data" / "meaning"
Matrix = npt.NDArray[np.float32]
MIN_SUPPORT = 6  # results a cut-off must keep before its precision says anything (pairs count both ways)


@dataclass(frozen=True)
class Note:
    id: str
    topic: str
    lang: str
    latin: bool
    text: str


def notes(split: str) -> list[Note]:
    """``split``: "tune" (for calibration) or "heldout" (never used to calibrate)."""
    lines = (DEVSET / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [Note(row["id"], row["topic"], row["lang"], row["latin"], row["text"]) for row in rows]


def card_texts(items: Sequence[Note]) -> list[str]:
    """What the app embeds for each note once it is a card."""
    provider = LocalProvider(time_limit_seconds=None)
    texts = []
    for note in items:
        draft = provider.analyze_card(note.text, DEFAULT_CATEGORIES)
        texts.append(embedding_text(draft.title, draft.summary, draft.tags, note.text))
    return texts


def semantic_vectors(texts: Sequence[str]) -> Matrix:
    from san_desktop.ai import encoder

    return encoder.encode(texts)


EMBEDDERS: dict[str, Callable[[Sequence[str]], Matrix]] = {
    "use-multilingual-v3": semantic_vectors,
    "local-hashed-ngram-v1": hashed_embed,
}


@dataclass(frozen=True)
class Quality:
    top1: float  # the nearest other note is on the same topic
    precision5: float  # of the five nearest
    cross_language: float  # the nearest note of the other language is on the topic
    within_threshold: float  # of the nearest (up to SIMILAR_LIMIT) within the calibrated threshold
    within_count: int


def _similarities(vectors: Matrix) -> Matrix:
    similarity: Matrix = (vectors @ vectors.T).astype(np.float32)
    np.fill_diagonal(similarity, -np.inf)
    return similarity


def quality(items: Sequence[Note], vectors: Matrix, threshold: float) -> Quality:
    similarity = _similarities(vectors)
    topics = np.array([note.topic for note in items])
    langs = np.array([note.lang for note in items])
    same = topics[:, None] == topics[None, :]
    rows = np.arange(len(items))
    order = np.argsort(-similarity, axis=1)
    top1 = float(same[rows, order[:, 0]].mean())
    precision5 = float(np.mean([same[row, order[row, :5]].mean() for row in rows]))
    other = np.where(langs[:, None] != langs[None, :], similarity, -np.inf)
    cross = float(same[rows, other.argmax(axis=1)].mean())
    within = [
        bool(same[row, column])
        for row in rows
        for column in order[row, :SIMILAR_LIMIT]
        if 1.0 - similarity[row, column] <= threshold
    ]
    return Quality(top1, precision5, cross, float(np.mean(within)) if within else math.nan, len(within))


def nearest_pairs(items: Sequence[Note], vectors: Matrix, depth: int) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """The cosine of each note's ``depth`` nearest notes, and whether each is on the note's topic."""
    similarity = _similarities(vectors)
    topics = np.array([note.topic for note in items])
    order = np.argsort(-similarity, axis=1)[:, :depth]
    rows = np.arange(len(items))[:, None]
    return similarity[rows, order].ravel(), (topics[:, None] == topics[order]).ravel()


def calibrate(items: Sequence[Note], vectors: Matrix) -> Calibration:
    """The threshold: the loosest cosine cut-off above which every stricter cut-off (keeping at least
    ``MIN_SUPPORT`` results) still keeps the nearest cards (``SIMILAR_LIMIT`` of each) on topic
    ``TARGET_PRECISION`` of the time; the score: a
    logistic fit of "on topic" against the cosine of the ten nearest. Rounded to two decimals (up, for
    the cut-off: stricter), so that the table in ``ai.calibration`` is exactly what this prints."""
    cosines, on_topic = nearest_pairs(items, vectors, SIMILAR_LIMIT)
    order = np.argsort(-cosines)
    counts = np.arange(1, len(order) + 1)
    hits = np.cumsum(on_topic[order]) / counts
    # every stricter cut-off held too; the first few results alone are too few to judge by
    holds = np.minimum.accumulate((hits >= TARGET_PRECISION) | (counts < MIN_SUPPORT))
    judged = np.flatnonzero(holds & (counts >= MIN_SUPPORT))
    cut = float(cosines[order][int(judged[-1])]) if judged.size else 1.0
    cut = math.ceil(cut * 100) / 100
    slope, midpoint = _logistic(cosines.astype(np.float64), on_topic.astype(np.float64))
    return Calibration(threshold=round(1.0 - cut, 2), slope=round(slope, 1), midpoint=round(midpoint, 2))


def _logistic(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> tuple[float, float]:
    """Maximum likelihood of P(y) = 1 / (1 + exp(-(a x + b))) by Newton's method; (a, -b / a)."""
    a, b = 1.0, 0.0
    design = np.stack([x, np.ones_like(x)], axis=1)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(a * x + b)))
        gradient = design.T @ (y - p)
        hessian = -(design.T * (p * (1 - p))) @ design - 1e-6 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        a, b = a - float(step[0]), b - float(step[1])
        if float(np.abs(step).max()) < 1e-9:
            break
    return a, -b / a
