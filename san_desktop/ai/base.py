"""The provider interface and the limits every provider's output is held to (seed: title ≤ 20
characters in Korean, summary ≤ 3 short sentences, ≤ 5 tags, one category from the list)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

from san_desktop.core.enums import QuizType

if TYPE_CHECKING:  # numpy is for the providers; the window's card and quiz pages import this module
    import numpy as np
    import numpy.typing as npt

DEFAULT_CATEGORIES: tuple[str, ...] = (
    "Frontend",
    "Backend",
    "Programming Languages",
    "AI/ML",
    "Data Engineering",
    "Databases",
    "Infra/DevOps",
    "CS",
    "Security",
    "Mobile",
    "Architecture/Design",
    "Testing/QA",
    "Other",
)
FALLBACK_CATEGORY = "Other"
MAX_TAGS = 5
MAX_SUMMARY_SENTENCES = 3
MAX_TITLE_KOREAN = 20
MAX_TITLE_OTHER = 60
MAX_TAG_LENGTH = 40

Vectors: TypeAlias = "npt.NDArray[np.float32]"


@dataclass(frozen=True)
class CardDraft:
    title: str
    summary: str
    tags: tuple[str, ...]
    category: str


@dataclass(frozen=True)
class TilCard:
    """One card of a day, as the TIL writer gets it."""

    card_id: str
    title: str
    summary: str
    tags: tuple[str, ...]
    category: str
    source_ref: str | None
    code_blocks: tuple[str, ...] = ()  # fenced blocks of the scrap, each with its opening line (language)


@dataclass(frozen=True)
class QuizDraft:
    """A recall quiz as a provider makes it (checked against its card before it is kept)."""

    card_id: str
    quiz_type: QuizType
    question: str  # the statement of an OX quiz
    answer: str  # "O" or "X" for OX
    accepted: tuple[str, ...] = ()  # other spellings a short answer may take
    explanation: str = ""


@dataclass(frozen=True)
class TilDraft:
    title: str
    markdown: str  # starts with "# TIL", one "## topic" section per group


class KeptParts(Protocol):
    """Where a long AI operation keeps what each of its calls answered, as the answers come: a run killed
    midway is resumed without asking again for what it had (issue 23). ``key`` names the call by all of its
    input; ``get`` gives None for a call never answered."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...


_FENCE_OPENING = re.compile(r"^```[^\n]*\n", re.M)
_FENCE_CLOSING = re.compile(r"^```[ \t]*$", re.M)


def code_blocks(text: str, limit: int = 2) -> tuple[str, ...]:
    """The first fenced code blocks of a scrap, kept whole (with their language). A fence that nothing
    closes ends the search: no later one is closed either (one pattern for both, lazily looking for the
    closing line from every opening, was quadratic in a text of unclosed fences, issue 23)."""
    blocks: list[str] = []
    position = 0
    while len(blocks) < limit:
        opening = _FENCE_OPENING.search(text, position)
        closing = _FENCE_CLOSING.search(text, opening.end()) if opening is not None else None
        if opening is None or closing is None:
            break
        blocks.append(text[opening.start() : closing.end()])
        position = closing.end()
    return tuple(blocks)


def group_by_topic(cards: Sequence[TilCard]) -> list[tuple[str, list[TilCard]]]:
    """Cards grouped by category, biggest group first, then by name; "Other" last."""
    groups: dict[str, list[TilCard]] = {}
    for card in cards:
        groups.setdefault(card.category or FALLBACK_CATEGORY, []).append(card)
    return sorted(groups.items(), key=lambda item: (item[0] == FALLBACK_CATEGORY, -len(item[1]), item[0]))


EMBED_TEXT_LIMIT = 4000  # of a scrap's text, in its card's vector


def embedding_text(title: str, summary: str, tags: Sequence[str], body: str) -> str:
    """What a card's vector is made of: its words, then the start of its scrap's text."""
    return "\n".join((title, summary, " ".join(tags), body[:EMBED_TEXT_LIMIT]))


def card_entry(card: TilCard) -> str:
    """A card as a TIL entry: its title, summary, tags, source link and code, in markdown."""
    lines = [f"### {card.title}", "", card.summary.strip()]
    if card.tags:
        lines += ["", " ".join(f"`#{tag}`" for tag in card.tags)]
    if card.source_ref and card.source_ref.startswith(("http://", "https://")):
        lines += ["", f"Source: <{card.source_ref}>"]
    for block in card.code_blocks:
        lines += ["", block]
    return "\n".join(lines)


def assemble_til(day: str, title: str, sections: Sequence[tuple[str, str]]) -> str:
    parts = [f"# TIL {day}: {title}" if title else f"# TIL {day}"]
    for topic, body in sections:
        parts += ["", f"## {topic}", "", body.strip()]
    return "\n".join(parts) + "\n"


class AIProvider(Protocol):
    """What the jobs need from an AI model. Star ranking joins with its issue."""

    @property
    def name(self) -> str: ...

    @property
    def embedding_model(self) -> str:
        """Identifies the vector space: vectors of different models are never compared."""
        ...

    @property
    def similarity_threshold(self) -> float:
        """Cosine distance under which two cards count as similar, for this embedding model."""
        ...

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft: ...

    def refine_scrap(self, text: str) -> str: ...

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        """A day's TIL: each card summarised, grouped by topic under "## topic", code fences kept. A
        provider that makes several calls keeps each answer in ``kept`` and reuses what is there."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text."""
        ...

    def make_quizzes(self, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
        """Quizzes of ``quiz_types`` about ``cards`` (a day's), each tied to its card by ``card_id``; the
        caller keeps only those whose answer it finds in the card."""
        ...


_HANGUL = re.compile(r"[가-힣]")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|(?<=다\.)\s*|\n+")


def is_mostly_korean(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(1 for ch in letters if _HANGUL.match(ch)) / len(letters) >= 0.3


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,.;:-") + "…"


def title_limit(title: str) -> int:
    return MAX_TITLE_KOREAN if is_mostly_korean(title) else MAX_TITLE_OTHER


def fit_words(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters between two words (no "…", no broken word, no dangling
    punctuation); a first word longer than the limit is cut where a hyphen or an underscore allows, else
    returned empty."""
    text = " ".join(text.split()).strip(" ,.;:-–—")
    if len(text) <= limit:
        return text
    words = text.split(" ")
    kept = ""
    for word in words:
        longer = f"{kept} {word}" if kept else word
        if len(longer.rstrip(" ,.;:-–—")) > limit:
            break
        kept = longer
    if not kept:
        parts = re.split(r"(?<=[-_])", words[0])
        for part in parts:
            if len(kept + part) > limit:
                break
            kept += part
    kept = kept.rstrip(" ,.;:-–—_(&")
    while " " in kept and kept.rsplit(" ", 1)[1].lower() in _DANGLING:
        kept = kept.rsplit(" ", 1)[0].rstrip(" ,.;:-–—_(&")
    return kept


_DANGLING = frozenset("a an the and or with of for in on to at by from vs 및 또는 그리고".split())


def finalize_draft(draft: CardDraft, categories: Sequence[str]) -> CardDraft:
    """Hold any provider's answer to the product's limits."""
    cleaned = draft.title.strip().lstrip("#").strip()
    title = fit_words(cleaned, title_limit(cleaned)) or "Untitled scrap"
    sentences = split_sentences(draft.summary.strip())[:MAX_SUMMARY_SENTENCES]
    summary = " ".join(clip(sentence, 240) for sentence in sentences)
    tags: list[str] = []
    seen: set[str] = set()
    for tag in draft.tags:
        cleaned = clip(tag.strip().lstrip("#").strip(), MAX_TAG_LENGTH)
        if cleaned and cleaned.casefold() not in seen:
            seen.add(cleaned.casefold())
            tags.append(cleaned)
        if len(tags) == MAX_TAGS:
            break
    by_key = {category.casefold(): category for category in categories}
    category = by_key.get(draft.category.strip().casefold(), FALLBACK_CATEGORY)
    return CardDraft(title, summary, tuple(tags), category)
