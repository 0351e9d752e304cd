"""The embedded provider's category choice (issue 16): a multinomial naive Bayes model over a text's words,
trained when first needed on the labelled examples that ship with the package
(``category_examples.jsonl``, 16 short English and Korean notes per default category) with each category's
keyword list as more evidence. A text with no word the model knows is "Other".

With the sentence encoder, each default category's centroid (the mean vector of its examples, made by
``make_centroids`` and shipped as ``category_centroids.npz``; a test checks the file is what the examples
give) adds the text's closeness in meaning to the words' scores: a Korean note about Docker's layer cache
whose words say little lands under DevOps, not Frontend.

A user's own categories (beyond the 13 defaults) are chosen only by name: a word of the category's name in
the text.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files

import numpy as np
import numpy.typing as npt

from san_desktop.ai import encoder
from san_desktop.ai.base import DEFAULT_CATEGORIES, FALLBACK_CATEGORY
from san_desktop.ai.keyterms import heading, prose
from san_desktop.ai.lexicon import CATEGORY_KEYWORDS
from san_desktop.ai.time_limit import check_time
from san_desktop.ai.wordclass import english_topic_word, fold_plural, tokens

EXAMPLES_FILE = "category_examples.jsonl"
CENTROIDS_FILE = "category_centroids.npz"
MEANING_WEIGHT = 20.0  # a cosine of 0.1 closer to a centroid counts as 2 nats of the words' evidence
KEYWORD_WEIGHT = 3.0  # a category keyword counts as much as three words of an example
SMOOTHING = 0.05
MIN_EVIDENCE = 1.5  # weighted known words below this: too little to say (Other)
_lock = threading.Lock()
log = logging.getLogger(__name__)


def features(text: str) -> Counter[str]:
    """The model's words of ``text``: its prose (code, URLs and file names left out), the heading twice."""
    body = prose(text)
    counts = Counter(fold_plural(key) for key, _surface in tokens(body))
    top = heading(text)
    if top:
        counts.update(fold_plural(key) for key, _surface in tokens(top))
    return counts


@dataclass(frozen=True)
class Model:
    priors: dict[str, float]
    log_probability: dict[str, dict[str, float]]  # category → feature → log P(feature | category)
    unseen: dict[str, float]  # category → log P of a feature it never saw
    vocabulary: frozenset[str]

    def scores(self, counts: Counter[str]) -> dict[str, float]:
        known = {key: count for key, count in counts.items() if key in self.vocabulary}
        result = {}
        for category, prior in self.priors.items():
            table = self.log_probability[category]
            unseen = self.unseen[category]
            # repeated words count with diminishing weight: one long paragraph on a side topic does not win
            result[category] = prior + sum(
                (1.0 + math.log(count)) * table.get(key, unseen) for key, count in known.items()
            )
        return result

    def evidence(self, counts: Counter[str]) -> float:
        """How much the text says: its known words that name something (verbs and fillers say nothing)."""
        return sum(
            1.0 + math.log(count)
            for key, count in counts.items()
            if key in self.vocabulary and (not key.isascii() or english_topic_word(key))
        )


def train(examples: Iterable[tuple[str, str]], keywords: dict[str, frozenset[str]]) -> Model:
    counts: dict[str, Counter[str]] = {category: Counter() for category in DEFAULT_CATEGORIES}
    documents: Counter[str] = Counter()
    for category, text in examples:
        counts.setdefault(category, Counter()).update(features(text))
        documents[category] += 1
    for category, words in keywords.items():
        for word in words:
            for key, _surface in tokens(word):
                counts.setdefault(category, Counter())[fold_plural(key)] += KEYWORD_WEIGHT  # type: ignore[assignment]
    vocabulary = frozenset(key for table in counts.values() for key in table)
    total_documents = sum(documents.values()) or 1
    log_probability: dict[str, dict[str, float]] = {}
    unseen: dict[str, float] = {}
    priors: dict[str, float] = {}
    for category, table in counts.items():
        denominator = sum(table.values()) + SMOOTHING * len(vocabulary)
        log_probability[category] = {key: math.log((n + SMOOTHING) / denominator) for key, n in table.items()}
        unseen[category] = math.log(SMOOTHING / denominator)
        priors[category] = math.log((documents[category] + 1) / (total_documents + len(counts)))
    return Model(priors, log_probability, unseen, vocabulary)


def load_examples() -> list[tuple[str, str]]:
    source = files("san_desktop.ai").joinpath(EXAMPLES_FILE).read_text(encoding="utf-8")
    examples = []
    for line in source.splitlines():
        if line.strip():
            item = json.loads(line)
            examples.append((item["category"], item["text"]))
    return examples


@functools.cache
def _model() -> Model:
    return train(load_examples(), CATEGORY_KEYWORDS)


def default_model() -> Model:
    """The model of the shipped examples (trained once per process, on first use)."""
    with _lock:
        return _model()


def make_centroids(examples: Sequence[tuple[str, str]]) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Each category's unit mean vector of its examples, by the sentence encoder (categories sorted)."""
    names = sorted({category for category, _text in examples})
    vectors = encoder.encode([text for _category, text in examples])
    rows = []
    for name in names:
        mean = vectors[[index for index, (category, _text) in enumerate(examples) if category == name]].mean(axis=0)
        rows.append(mean / (np.linalg.norm(mean) or 1.0))
    return names, np.stack(rows).astype(np.float32)


@functools.cache
def _centroids() -> dict[str, npt.NDArray[np.float32]]:
    """The shipped centroids (none when the file is missing or of another model: words alone decide)."""
    try:
        with files("san_desktop.ai").joinpath(CENTROIDS_FILE).open("rb") as handle:
            stored = np.load(handle, allow_pickle=False)
            if str(stored["model"]) != encoder.SEMANTIC_EMBEDDING_MODEL:
                return {}
            return dict(zip((str(name) for name in stored["categories"]), stored["centroids"], strict=True))
    except (OSError, KeyError, ValueError):
        log.warning("The category centroids (%s) could not be read; categories come from words alone", CENTROIDS_FILE)
        return {}


def _closeness(vector: npt.NDArray[np.float32] | None) -> dict[str, float]:
    """The text's cosine to each default category's centroid; empty without its vector."""
    if vector is None or vector.shape[0] != encoder.SEMANTIC_DIMENSIONS:
        return {}
    with _lock:
        centroids = _centroids()
    return {name: float(centroid @ vector) for name, centroid in centroids.items()}


def choose_category(
    text: str,
    categories: Sequence[str],
    model: Model | None = None,
    *,
    min_evidence: float = MIN_EVIDENCE,
    vector: npt.NDArray[np.float32] | None = None,
) -> str:
    """The words' naive Bayes choice, with ``vector`` (the text's, by the sentence encoder) its closeness
    to each category's centroid added."""
    counts = features(text)
    check_time()
    model = model or default_model()
    allowed = [category for category in categories if category in model.priors]
    chosen = FALLBACK_CATEGORY
    if allowed and model.evidence(counts) >= min_evidence:
        scores = model.scores(counts)
        closeness = _closeness(vector)
        chosen = max(allowed, key=lambda category: scores[category] + MEANING_WEIGHT * closeness.get(category, 0.0))
    if chosen == FALLBACK_CATEGORY:
        return _by_name(counts, categories) or FALLBACK_CATEGORY
    return chosen


def _by_name(counts: Counter[str], categories: Sequence[str]) -> str | None:
    """A category of the user's own, named by a word of the text ("Rust" for a note on Rust)."""
    for category in categories:
        if category in DEFAULT_CATEGORIES:
            continue
        names = [fold_plural(key) for key, _surface in tokens(category)]
        if names and all(name in counts for name in names):
            return category
    return None
