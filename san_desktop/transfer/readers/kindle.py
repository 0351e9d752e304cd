"""Kindle's ``My Clippings.txt``: entries between ``==========`` lines, each a book line, a line that says what
it is (highlight, note, bookmark), where and when, then the text.

Kindle never rewrites the file: extending a highlight appends a new entry and keeps the old one, so of two
overlapping highlights of a book only the later (else the longer) is kept. A note at a location inside a
highlight is that highlight's note; bookmarks hold no text and are passed over."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from san_desktop.core.enums import SourceType
from san_desktop.core.text import RejectedContentError, check_capturable
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import Ticker, parse_english_date

SEPARATOR = "=========="
# "- Your Highlight on page 12 | Location 123-125 | Added on …"; the first Kindles wrote "- Highlight Loc. 240-42".
_KIND = r"^-\s*(?:Your\s+)?(?P<kind>Highlight|Note|Bookmark)\b"
ENGLISH_MARKER = re.compile(_KIND, re.IGNORECASE | re.MULTILINE)
_LOCATION = re.compile(r"\b(?:location|loc\.)\s+(?P<start>\d+)(?:\s*-\s*(?P<end>\d+))?", re.IGNORECASE)
# What Kindle writes instead of a passage once the publisher's share of the book has been clipped.
CLIPPING_LIMIT = "You have reached the clipping limit for this item"
_ADDED = re.compile(r"\bAdded on\s+(?P<when>.+)$", re.IGNORECASE)


@dataclass
class Clipping:
    book: str
    kind: str  # "highlight", "note", "bookmark", or "other" (a Kindle in another language)
    text: str
    start: int | None
    end: int | None
    added: datetime | None
    order: int  # its place in the file
    notes: list[str] = field(default_factory=list)


def looks_like_clippings(text: str) -> bool:
    """Separator lines and an entry whose second line is Kindle's ``- Your …`` (or, in another language, any
    ``- …`` line right after the book's)."""
    if not any(line.strip() == SEPARATOR for line in text.splitlines()):
        return False
    if ENGLISH_MARKER.search(text):
        return True
    first = [line for line in text.replace("\ufeff", "").splitlines() if line.strip()][:2]
    return len(first) == 2 and first[1].lstrip().startswith("- ")


def parse_clippings(text: str, ticker: Ticker) -> list[Clipping]:
    clippings: list[Clipping] = []
    block: list[str] = []
    for line in [*text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), SEPARATOR]:
        if line.strip() != SEPARATOR:
            block.append(line)
            continue
        lines = [one.replace("\ufeff", "") for one in block]  # Kindle may put a BOM before any entry's book
        block = []
        while lines and not lines[0].strip():
            lines.pop(0)
        if len(lines) < 2:
            continue
        ticker.tick()
        clippings.append(_clipping(lines, len(clippings)))
    return clippings


def _clipping(lines: list[str], order: int) -> Clipping:
    meta = lines[1].strip()
    kind_match = ENGLISH_MARKER.match(meta)
    location = _LOCATION.search(meta)
    added = _ADDED.search(meta)
    start = int(location["start"]) if location else None
    end = int(location["end"]) if location and location["end"] else start
    if start is not None and end is not None and end < start:  # "Location 998-12" means 998-1012
        width = len(location["end"]) if location else 0
        end = start - start % 10**width + end
        end = end if end >= start else end + 10**width
    return Clipping(
        book=lines[0].strip(),
        kind=kind_match["kind"].lower() if kind_match else "other",
        text="\n".join(lines[2:]).strip(),
        start=start,
        end=end,
        added=parse_english_date(added["when"]) if added else None,
        order=order,
    )


def read_kindle(text: str, source: str, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.KINDLE, source=source)
    clippings = [one for one in parse_clippings(text, ticker) if one.kind != "bookmark" and one.text]
    highlights = _collapse([one for one in clippings if one.kind != "note"])
    for note in (one for one in clippings if one.kind == "note"):
        owner = _owner(note, highlights)
        if owner is None:
            highlights.append(note)
        else:
            owner.notes.append(note.text)
    for clipping in sorted(highlights, key=lambda one: one.order):
        if CLIPPING_LIMIT.lower() in clipping.text.lower() and len(clipping.text) < 2 * len(CLIPPING_LIMIT):
            plan.refused.append(Refusal(clipping.book, "Kindle kept no text: the book's clipping limit was reached"))
            continue
        parts = [clipping.text, *(f"Note: {note}" for note in clipping.notes), f"— {clipping.book}"]
        try:
            content = check_capturable("\n\n".join(parts), max_bytes)
        except RejectedContentError as exc:
            plan.refused.append(Refusal(clipping.book, str(exc)))
            continue
        plan.items.append(
            ImportItem(
                source_type=SourceType.TEXT, content=content, source_ref=clipping.book, captured_at=clipping.added
            )
        )
    ticker.finish()
    return plan


def _overlap(one: Clipping, other: Clipping) -> bool:
    if one.book != other.book or one.start is None or one.end is None or other.start is None or other.end is None:
        return False
    return one.start <= other.end and other.start <= one.end


def _supersedes(newer: Clipping, older: Clipping) -> bool:
    """Whether ``newer`` (later in the file) replaces ``older``: added later, or when the times do not
    tell, longer (ties go to the later entry)."""
    if newer.added is not None and older.added is not None and newer.added != older.added:
        return newer.added > older.added
    return len(newer.text) >= len(older.text)


def _collapse(highlights: list[Clipping]) -> list[Clipping]:
    kept: list[Clipping] = []
    for highlight in highlights:
        overlapping = [one for one in kept if _overlap(one, highlight)]
        if all(_supersedes(highlight, one) for one in overlapping):
            kept = [one for one in kept if one not in overlapping]
            kept.append(highlight)
    return kept


def _owner(note: Clipping, highlights: list[Clipping]) -> Clipping | None:
    """The highlight of the note's book whose range holds the note's location (the one ending there first)."""
    if note.start is None:
        return None
    holding = [
        one for one in highlights
        if one.kind == "highlight" and one.book == note.book and one.start is not None and one.end is not None
        and one.start <= note.start <= one.end
    ]  # fmt: skip
    if not holding:
        return None
    return max(holding, key=lambda one: (one.end == note.start, one.order))
