"""The embedded provider: offline, instant, no model download (DESIGN.md §7).

Cards from the text alone (issue 16): the heading or key phrase as title (``keyterms``), a TextRank
summary (``summary``), key terms as tags, a naive Bayes category trained on shipped examples
(``categories``); a text clean-up for refinement; template TILs; and embeddings by the shipped sentence
encoder (``encoder``: meaning, across English and Korean), or, should it not load, hashed character
n-grams (signed feature hashing with crc32, never Python's randomised ``hash()``) under their own model id.

Bounded (issue 23): a card is made from the text's first ``ANALYSIS_WINDOW`` characters, and every call
stops with ``AnalysisTooLongError`` past its time limit (``ai.local_time_limit_seconds``).
"""

from __future__ import annotations

import functools
import math
import re
import threading
import time
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from san_desktop.ai import encoder
from san_desktop.ai.base import (
    FALLBACK_CATEGORY,
    CardDraft,
    KeptParts,
    QuizDraft,
    TilCard,
    TilDraft,
    Vectors,
    assemble_til,
    card_entry,
    embedding_text,
    finalize_draft,
    group_by_topic,
)
from san_desktop.ai.calibration import score_of, threshold_of
from san_desktop.ai.categories import MIN_EVIDENCE, choose_category
from san_desktop.ai.keyterms import key_terms, tags
from san_desktop.ai.lexicon import KNOWN_TERMS
from san_desktop.ai.summary import summarize
from san_desktop.ai.time_limit import Clock, check_time, time_limit
from san_desktop.ai.titles import link_words, title
from san_desktop.ai.topics import group_by_meaning
from san_desktop.ai.wordclass import is_name, tokens
from san_desktop.core.enums import QuizType
from san_desktop.core.failpoints import pause_here
from san_desktop.core.settings import AISettings
from san_desktop.core.text import preview

P = ParamSpec("P")
R = TypeVar("R")
LOCAL_DIMENSIONS = 512  # of the hashed n-gram vectors
RECENT_VECTORS = 32
# the vectors of cards just analysed (made for their category), by their text: the job's embed takes them
# (one per process, as the encoder is: a provider rebuilt between analysis and embedding still finds it)
_recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
_recent_lock = threading.Lock()

_CODE_FENCE = re.compile(r"```.*?```", re.S)
# What a card is made from: key terms read 300 sentences and the summary ranks 120, so an article of up to
# ~50,000 characters (300 sentences of 160) is read whole, and no text costs more than one that long.
ANALYSIS_WINDOW = 50_000
_SPACES = re.compile(r"[ \t]+")
_WORD_SLACK = 200  # characters the window may end early to end between two words
DEFAULT_TIME_LIMIT: float = AISettings.local_time_limit_seconds  # seconds, the setting's default


def analysis_window(text: str, limit: int = ANALYSIS_WINDOW) -> str:
    """The part of ``text`` a card is made from: all of it up to ``limit`` characters, else its start,
    cut between two words (a token longer than the slack is cut where the limit falls)."""
    if len(text) <= limit:
        return text
    for end in range(limit, max(0, limit - _WORD_SLACK), -1):
        if text[end].isspace():
            return text[:end].rstrip()
    return text[:limit]


def keyword_scores(text: str) -> tuple[Counter[str], dict[str, str]]:
    """Scores per word: frequency, damped, with a bonus for words in the first line and longer words."""
    prose = _CODE_FENCE.sub(" ", text)
    first_line = prose.strip().split("\n", 1)[0]
    head = {key for key, _surface in tokens(first_line)}
    counts: Counter[str] = Counter()
    surfaces: dict[str, str] = {}
    for key, surface in tokens(prose):
        counts[key] += 1
        # names keep their capitals (SQLite, PySide6, WAL); ordinary words are shown in lower case
        if key not in surfaces or is_name(surface):
            surfaces[key] = surface if is_name(surface) else key
    scores: Counter[str] = Counter()
    for key, count in counts.items():
        score = 1.0 + math.log(count)
        if key in head:
            score += 0.5
        if is_name(surfaces[key]) or key in KNOWN_TERMS:
            score *= 1.6  # technical names and terms make the best tags
        score *= min(1.4, 0.8 + len(key) / 10)
        scores[key] = score  # type: ignore[assignment]
    return scores, surfaces


def _time_limited(method: Callable[Concatenate[LocalProvider, P], R]) -> Callable[Concatenate[LocalProvider, P], R]:
    """The provider's call runs within its time limit."""

    def limited(provider: LocalProvider, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with time_limit(provider.time_limit_seconds, provider._clock):
            return method(provider, *args, **kwargs)

    functools.update_wrapper(limited, method)  # its name and docstring (the wrapper's type stays exact)
    return limited


class LocalProvider:
    """The embedded default: works offline, needs no model and no key."""

    name = "local"
    time_limit_seconds: float | None = DEFAULT_TIME_LIMIT  # (defaults here too: subclasses may skip __init__)
    _clock: Clock = time.monotonic

    def __init__(self, time_limit_seconds: float | None = DEFAULT_TIME_LIMIT, clock: Clock = time.monotonic) -> None:
        """``time_limit_seconds``: how long one call may take (None: no limit)."""
        self.time_limit_seconds = time_limit_seconds
        self._clock = clock

    @property
    def embedding_model(self) -> str:
        """The sentence encoder's space; the hashed n-grams' once the encoder could not load."""
        return encoder.embedding_model()

    @property
    def similarity_threshold(self) -> float:
        return threshold_of(self.embedding_model)

    @_time_limited
    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        """Title from the heading or the key phrase, an extractive summary, the key terms as tags, and the
        category of the shipped model (issue 16), from the text's first ``ANALYSIS_WINDOW`` characters."""
        pause_here("local.analyze_card")  # tests of a provider that never returns stop here
        whole, text = text, analysis_window(text)
        slug = link_words(text)  # a link alone (its page not fetched): its address names it
        source = f"{text}\n\n{slug}" if slug else text
        terms = key_terms(source)
        check_time()
        draft = finalize_draft(
            CardDraft(
                title=slug[:1].upper() + slug[1:] if slug else title(text, terms),
                summary=summarize(text) or preview(re.sub(r"(?m)^#+\s*", "", text), 200),
                tags=tags(terms),
                category=FALLBACK_CATEGORY,
            ),
            categories,
        )
        # the card's own vector says what the text is about; the job asks for that vector next: kept
        vector = self._card_vector(embedding_text(draft.title, draft.summary, draft.tags, whole))
        # a few words of an address are weak evidence: two known words at least
        category = choose_category(source, categories, min_evidence=2.0 if slug else MIN_EVIDENCE, vector=vector)
        return replace(draft, category=category)  # one of ``categories`` (finalising twice would clip twice)

    def _card_vector(self, card_text: str) -> Vectors | None:
        if not encoder.usable():
            return None
        try:
            vector = encoder.encode([card_text])
        except encoder.EncoderUnavailableError:
            return None
        row: npt.NDArray[np.float32] = vector[0]
        with _recent_lock:
            _recent[card_text] = row
            while len(_recent) > RECENT_VECTORS:
                _recent.popitem(last=False)
        return row

    @_time_limited
    def refine_scrap(self, text: str) -> str:
        """Tidy a scrap without changing what it says: whitespace, repeated lines, broken paragraphs.
        Code blocks are kept exactly as they were. All of the text (it is kept instead of the original)."""
        parts = re.split(r"(```.*?```)", text, flags=re.S)
        cleaned = []
        for index, part in enumerate(parts):
            if index % 2 == 1:
                cleaned.append(part.strip("\n"))
                continue
            lines: list[str] = []
            for number, raw in enumerate(part.split("\n")):
                if number % 1024 == 0:
                    check_time()
                line = _SPACES.sub(" ", raw).strip() if raw else ""
                if line and lines and line == lines[-1]:
                    continue  # a line pasted twice
                if not line and lines and not lines[-1]:
                    continue  # runs of blank lines
                lines.append(line)
            cleaned.append("\n".join(lines).strip("\n"))
        return "\n\n".join(piece for piece in cleaned if piece.strip()).strip()

    @_time_limited
    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        """Offline: the day's cards grouped by meaning (``ai.topics``; by category without the sentence
        encoder), each with its short summary, tags, source link and code; the title names the biggest
        topics. Quick and in one piece: nothing to keep."""
        groups = self._topics(cards)
        sections = [(topic, "\n\n".join(card_entry(card) for card in members)) for topic, members in groups]
        title = ", ".join(topic for topic, _members in groups[:3]) or "nothing captured"
        return TilDraft(title=title[:200], markdown=assemble_til(day, title, sections))

    @staticmethod
    def _topics(cards: Sequence[TilCard]) -> list[tuple[str, list[TilCard]]]:
        if len(cards) < 2 or not encoder.usable():
            return group_by_topic(cards)
        try:
            vectors = encoder.encode([embedding_text(card.title, card.summary, card.tags, "") for card in cards])
        except encoder.EncoderUnavailableError:
            return group_by_topic(cards)
        model = encoder.embedding_model()
        return group_by_meaning(cards, vectors, lambda cosine: score_of(model, 1.0 - cosine))

    @_time_limited
    def make_quizzes(self, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
        from san_desktop.ai.quizzes import local_quizzes  # (it builds on this module)

        return local_quizzes(cards, quiz_types)

    @_time_limited
    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in the space ``embedding_model`` names (read it after embedding: a model
        that failed to load while embedding leaves the hashed n-grams)."""
        if encoder.usable():
            with _recent_lock:
                known = {text: _recent.pop(text) for text in texts if text in _recent}
            try:
                missing = [text for text in texts if text not in known]
                found = dict(zip(missing, encoder.encode(missing), strict=True)) if missing else {}
            except encoder.EncoderUnavailableError:
                pass  # said once in the log; the hashed n-grams from now on
            else:
                found |= known
                return np.stack([found[text] for text in texts]).astype(np.float32)
        return hashed_embed(texts)


def hashed_embed(texts: Sequence[str]) -> Vectors:
    """Hashed word and character n-grams of each text's first ``ANALYSIS_WINDOW`` characters."""
    matrix = np.zeros((len(texts), LOCAL_DIMENSIONS), dtype=np.float32)
    for row, text in enumerate(texts):
        check_time()
        for feature, weight in _features(analysis_window(text)).items():
            digest = zlib.crc32(feature.encode("utf-8"))
            sign = 1.0 if digest & 0x80000000 else -1.0
            matrix[row, digest % LOCAL_DIMENSIONS] += sign * weight
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: Vectors = (matrix / norms).astype(np.float32)
    return normalized


def _features(text: str) -> Counter[str]:
    """Word unigrams (with Korean particles stripped) and character 3-grams inside words."""
    features: Counter[str] = Counter()
    for key, _surface in tokens(text):
        features["w:" + key] += 2.0  # type: ignore[assignment]
        padded = f" {key} "
        for start in range(len(padded) - 2):
            features["c:" + padded[start : start + 3]] += 1.0  # type: ignore[assignment]
    for key in features:
        features[key] = math.sqrt(features[key])  # type: ignore[assignment]
    return features
