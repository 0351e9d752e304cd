"""The embedded provider: offline, instant, no model download (DESIGN.md §7).

Extractive summaries, a keyword scorer with English and Korean stopwords (Korean particles stripped),
a category keyword table, a text clean-up for refinement, and hashed character n-gram embeddings
(signed feature hashing with crc32, never Python's randomised ``hash()``).
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from san_desktop.ai.base import (
    FALLBACK_CATEGORY,
    MAX_TAGS,
    CardDraft,
    QuizDraft,
    TilCard,
    TilDraft,
    Vectors,
    assemble_til,
    card_entry,
    finalize_draft,
    group_by_topic,
    split_sentences,
)
from san_desktop.ai.lexicon import CATEGORY_KEYWORDS, ENGLISH_STOPWORDS, KOREAN_STOPWORDS, KOREAN_SUFFIXES
from san_desktop.core.enums import QuizType

LOCAL_EMBEDDING_MODEL = "local-hashed-ngram-v1"  # also ai.factory.LOCAL_EMBEDDING_MODEL (a test keeps them equal)
LOCAL_DIMENSIONS = 512
# Hashed n-grams overlap less than model embeddings: similar texts sit further apart.
LOCAL_SIMILARITY_THRESHOLD = 0.7

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9+#]*(?:[.\-][A-Za-z0-9+#]+)*|[가-힣]+|\d+(?:\.\d+)?")
_CODE_FENCE = re.compile(r"```.*?```", re.S)


# Topic and object particles also follow one-syllable nouns (훅은, 앱을, 키를).
_SHORT_STEM_PARTICLES = ("은", "는", "을", "를")


def strip_korean_particle(word: str) -> str:
    for suffix in KOREAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    if len(word) == 2 and word.endswith(_SHORT_STEM_PARTICLES):
        return word[0]
    return word


def tokens(text: str) -> list[tuple[str, str]]:
    """(key, surface form) of each content word: lower-cased English, Korean without its particle."""
    found = []
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        if word[0].isdigit():
            continue
        if "가" <= word[0] <= "힣":
            stem = strip_korean_particle(word)
            if stem in KOREAN_STOPWORDS or word in KOREAN_STOPWORDS:
                continue
            found.append((stem, stem))
        else:
            key = word.lower().rstrip(".")
            if len(key) < 2 or key in ENGLISH_STOPWORDS:
                continue
            found.append((key, word.rstrip(".")))
    return found


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
    known = frozenset().union(*CATEGORY_KEYWORDS.values())
    scores: Counter[str] = Counter()
    for key, count in counts.items():
        score = 1.0 + math.log(count)
        if key in head:
            score += 0.5
        if is_name(surfaces[key]) or key in known:
            score *= 1.6  # technical names and terms make the best tags
        score *= min(1.4, 0.8 + len(key) / 10)
        scores[key] = score  # type: ignore[assignment]
    return scores, surfaces


def is_name(word: str) -> bool:
    """SQLite, PySide6, WAL, iOS: capitals after the first letter, or digits inside a word."""
    return any(ch.isupper() for ch in word[1:]) or (any(ch.isdigit() for ch in word) and word[0].isalpha())


def choose_category(keys: set[str], categories: Sequence[str]) -> str:
    best, best_score = FALLBACK_CATEGORY, 0
    for category in categories:
        score = len(keys & CATEGORY_KEYWORDS.get(category, frozenset()))
        if score > best_score:
            best, best_score = category, score
    return best


def _title(text: str) -> str:
    for line in text.strip().split("\n"):
        candidate = line.strip().lstrip("#>*- ").strip()
        if candidate and not candidate.startswith("```"):
            return split_sentences(candidate)[0] if split_sentences(candidate) else candidate
    return "Untitled scrap"


def _summary(text: str, scores: Counter[str]) -> str:
    prose = _CODE_FENCE.sub(" ", text)
    sentences = [s for s in split_sentences(prose) if len(s) > 3]
    if not sentences:
        return text.strip()[:200]
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (
            -sum(scores.get(key, 0.0) for key, _ in tokens(sentences[i])) / math.sqrt(1 + len(tokens(sentences[i])))
            - (0.5 if i == 0 else 0.0)
        ),
    )
    chosen = sorted(ranked[:3])
    return " ".join(sentences[i] for i in chosen)


class LocalProvider:
    """The embedded default: works offline, needs no model and no key."""

    name = "local"
    embedding_model = LOCAL_EMBEDDING_MODEL
    similarity_threshold = LOCAL_SIMILARITY_THRESHOLD

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        scores, surfaces = keyword_scores(text)
        top = [key for key, _score in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]
        tags = tuple(surfaces[key] for key in top[:MAX_TAGS])
        draft = CardDraft(
            title=_title(text),
            summary=_summary(text, scores),
            tags=tags,
            category=choose_category(set(scores), categories),
        )
        return finalize_draft(draft, categories)

    def refine_scrap(self, text: str) -> str:
        """Tidy a scrap without changing what it says: whitespace, repeated lines, broken paragraphs.
        Code blocks are kept exactly as they were."""
        parts = re.split(r"(```.*?```)", text, flags=re.S)
        cleaned = []
        for index, part in enumerate(parts):
            if index % 2 == 1:
                cleaned.append(part.strip("\n"))
                continue
            lines: list[str] = []
            for raw in part.split("\n"):
                line = re.sub(r"[ \t]+", " ", raw).strip()
                if line and lines and line == lines[-1]:
                    continue  # a line pasted twice
                if not line and lines and not lines[-1]:
                    continue  # runs of blank lines
                lines.append(line)
            cleaned.append("\n".join(lines).strip("\n"))
        return "\n\n".join(piece for piece in cleaned if piece.strip()).strip()

    def write_til(self, day: str, cards: Sequence[TilCard]) -> TilDraft:
        """Offline: the day's cards grouped by category, each with its short summary, tags, source link
        and code; the title names the biggest topics."""
        groups = group_by_topic(cards)
        sections = [(topic, "\n\n".join(card_entry(card) for card in members)) for topic, members in groups]
        title = ", ".join(topic for topic, _members in groups[:3]) or "nothing captured"
        return TilDraft(title=title[:200], markdown=assemble_til(day, title, sections))

    def make_quizzes(self, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
        from san_desktop.ai.quizzes import local_quizzes  # (it builds on this module)

        return local_quizzes(cards, quiz_types)

    def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), LOCAL_DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text).items():
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
