"""The labelled development set of issue 16 (``tests/data/cards``): English and Korean scraps across the 13
default categories with the tags a person would file each under. ``tune.jsonl`` may be looked at while
tuning the embedded provider; ``heldout.jsonl`` only measures it (the test and the benchmark).

The shipped training examples (``san_desktop/ai/category_examples.jsonl``) were written separately from
both parts and never from them."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from san_desktop.ai.base import DEFAULT_CATEGORIES, CardDraft, title_limit
from san_desktop.ai.keyterms import FILE_NAME_TAIL
from san_desktop.ai.lexicon import ENGLISH_STOPWORDS, KOREAN_STOPWORDS
from san_desktop.ai.local import LocalProvider

DATA = Path(__file__).resolve().parent.parent / "data" / "cards"
SPLITS = ("tune", "heldout")


@dataclass(frozen=True)
class Example:
    id: str
    lang: str
    category: str
    text: str
    tags: tuple[str, ...]


def load(split: str) -> list[Example]:
    examples = []
    for line in (DATA / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            examples.append(Example(item["id"], item["lang"], item["category"], item["text"], tuple(item["tags"])))
    return examples


def title_problems(title: str, text: str) -> list[str]:
    """What is wrong with a title: too long for its script, an ellipsis, a word cut in two."""
    problems = []
    if len(title) > title_limit(title):
        problems.append(f"longer than {title_limit(title)}")
    if "…" in title or title.endswith("..."):
        problems.append("ellipsis")
    for word in re.findall(r"[\w+#@.'’-]+", title):
        word = word.strip(".'’-")
        if not word or word.lower() == "untitled":
            continue
        # every word of the title is a whole word of the text (a Korean word may carry a particle there)
        # (an English word may carry a Korean particle: "ORM을")
        hangul = "가" <= word[-1] <= "힣"
        pattern = rf"(?<![\w]){re.escape(word)}" + ("" if hangul else r"(?![A-Za-z0-9_])")
        if not re.search(pattern, text, re.I):
            problems.append(f"{word!r} is not a whole word of the text")
    return problems


def tag_problems(tag: str) -> list[str]:
    problems = []
    if tag.casefold() in ENGLISH_STOPWORDS or tag in KOREAN_STOPWORDS:
        problems.append("a stopword")
    if "/" in tag:
        problems.append("contains /")
    if FILE_NAME_TAIL.search(tag):
        problems.append("a file name")
    return problems


@dataclass
class Report:
    total: int = 0
    correct: int = 0
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)  # (expected, chosen)
    tags: int = 0
    good_tags: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def tag_precision(self) -> float:
        """Share of the tags made that are among the tags a person gave the text (case folded)."""
        return self.good_tags / self.tags if self.tags else 0.0

    def matrix(self, categories: Sequence[str] = DEFAULT_CATEGORIES) -> str:
        """The confusion matrix as text: a row per expected category, a column per chosen one."""
        short = {c: c.split("/")[0][:5] for c in categories}
        lines = ["expected \\ chosen".ljust(22) + " ".join(short[c].rjust(5) for c in categories)]
        for expected in categories:
            cells = " ".join(str(self.confusion[(expected, chosen)] or ".").rjust(5) for chosen in categories)
            lines.append(expected[:21].ljust(22) + cells)
        return "\n".join(lines)


def evaluate(split: str, provider: LocalProvider | None = None) -> Report:
    provider = provider or LocalProvider()
    report = Report()
    for example in load(split):
        draft: CardDraft = provider.analyze_card(example.text, DEFAULT_CATEGORIES)
        report.total += 1
        report.correct += draft.category == example.category
        report.confusion[(example.category, draft.category)] += 1
        gold = {tag.casefold() for tag in example.tags}
        report.tags += len(draft.tags)
        report.good_tags += sum(1 for tag in draft.tags if tag.casefold() in gold)
        title = draft.title
        report.problems += [f"{example.id} title {title!r}: {p}" for p in title_problems(title, example.text)]
        for tag in draft.tags:
            report.problems += [f"{example.id} tag {tag!r}: {p}" for p in tag_problems(tag)]
    return report
