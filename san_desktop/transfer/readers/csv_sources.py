"""Pocket's and Readwise's CSV exports. Columns are found by name, whatever their case or order: Pocket
(``title,url,time_added,tags,status``) gives URL items; Readwise, in its full export
(``Highlight,Book Title,Book Author,…,Highlighted at,Document tags``) or the short form
(``Highlight,Title,Author,URL,Note,Location,Date``), gives one text item per highlight.

A damaged row never takes the rest of the file with it: a row that cannot be read (a NUL character, a quote that
is never closed) is left out with its line number and why, and reading goes on at the next line that parses; a
time that cannot be true (before 1970, or in the future) leaves the item dated by the import, with a warning."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.text import RejectedContentError, check_capturable
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers._common import (
    Ticker,
    TimeFormat,
    TimeRead,
    is_web_address,
    read_time,
    split_tags,
    unique,
)

# Readwise's CSV export has no highlight id; a table made from its API ("id") or another tool may have one.
_HIGHLIGHT_IDS = ("highlight id", "highlight_id", "id")
_NOTED = "a note on that highlight"


def header(text: str) -> list[str]:
    """The column names of a CSV's first row, lowercased and trimmed (for detection and reading alike)."""
    try:
        first = next(csv.reader(io.StringIO(text, newline="")), [])
    except csv.Error:
        return []
    return [name.strip().lower() for name in first]


class _Lines:
    """The physical lines of a text from one of them on, for a ``csv.reader``; ``at`` is the next one's index."""

    def __init__(self, lines: list[str], at: int) -> None:
        self.lines = lines
        self.at = at

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.at >= len(self.lines):
            raise StopIteration
        self.at += 1
        return self.lines[self.at - 1]


def _rows(text: str, source: str, kind: str, required: str) -> Iterator[tuple[int, dict[str, str] | None, str]]:
    """Each row after the header as its line number and either a mapping from the lowercased column name to the
    trimmed value ('' for a missing one) or, for a row that cannot be read, None and why. After such a row,
    reading goes on at the line after its first. ``SanError`` when the first line is no header with ``required``."""
    lines = io.StringIO(text, newline="").readlines()
    feed = _Lines(lines, 0)
    reader = csv.reader(feed, strict=True)
    try:
        names = [name.strip().lower() for name in next(reader, [])]
    except csv.Error:
        names = []
    if required not in names:
        raise SanError(f"{source} is not {kind}: its first line names no “{required}” column.")
    while True:
        start = feed.at
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start + 1, None, _unreadable(exc)
            feed = _Lines(lines, start + 1)
            reader = csv.reader(feed, strict=True)
            continue
        raw = lines[start : feed.at]
        if len(raw) > 1 and len(row) != len(names):
            # a quoted field that ran on across lines into the rows after it: its quote was never closed
            yield start + 1, None, "a quote that is never closed"
            feed = _Lines(lines, start + 1)
            reader = csv.reader(feed, strict=True)
            continue
        if nul := next((number for number, line in enumerate(raw, start + 1) if "\x00" in line), None):
            yield start + 1, None, f"line {nul} holds a NUL character"
            continue
        if not any(value.strip() for value in row):
            continue
        values = {name: value.strip() for name, value in zip(names, row, strict=False)}
        yield start + 1, {name: values.get(name, "") for name in names}, ""


def _unreadable(error: csv.Error) -> str:
    """Why a row is left out, in words, from the csv module's error."""
    if "end of data" in str(error):
        return "a quote that is never closed"
    if "expected after" in str(error):
        return "a quote that is never closed, or closed in the middle of a value"
    return f"it cannot be read as CSV ({error})"


def read_pocket(text: str, source: str, ticker: Ticker) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.POCKET, source=source)
    for line, row, why in _rows(text, source, "a Pocket CSV export", "url"):
        ticker.tick()
        if row is None:
            plan.refused.append(Refusal(f"line {line}", why))
            continue
        address, title = row.get("url", ""), row.get("title", "")
        if not is_web_address(address):
            plan.refused.append(Refusal(address or title or f"line {line}", "not a web address"))
            continue
        added = read_time(row.get("time_added", ""), TimeFormat.EPOCH)
        plan.items.append(
            ImportItem(
                source_type=SourceType.URL,
                content=address,
                source_ref=address,
                title=title if title and title != address else None,  # Pocket writes the address when it had no title
                tags=unique(split_tags(row.get("tags", ""), r"\|")),
                captured_at=added.moment,
                warnings=added.warnings,
            )
        )
    ticker.finish()
    return plan


@dataclass
class _Highlight:
    """A Readwise row read, and the notes of the rows that hold only a note on it."""

    line: int
    title: str
    author: str
    location: str
    source_ref: str
    text: str
    note: str
    tags: tuple[str, ...]
    added: TimeRead
    highlight_id: str | None
    notes: list[_Highlight] = field(default_factory=list)

    @property
    def place(self) -> tuple[str, str, str]:
        return (self.title, self.author, self.location)


def read_readwise(text: str, source: str, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.READWISE, source=source)
    highlights: list[_Highlight] = []
    notes: list[_Highlight] = []
    for line, row, why in _rows(text, source, "a Readwise CSV export", "highlight"):
        ticker.tick()
        if row is None:
            plan.refused.append(Refusal(f"line {line}", why))
            continue
        read = _highlight(line, row)
        if read.text:
            highlights.append(read)
        elif read.note:
            notes.append(read)  # put with its highlight once all are read
        else:
            plan.refused.append(Refusal(read.source_ref, "an empty highlight"))
    places = Counter(one.place for one in highlights if one.location)
    by_place = {one.place: one for one in highlights if one.location and places[one.place] == 1}
    for note in notes:
        owner = by_place.get(note.place) if note.location else None
        if owner is None:
            plan.refused.append(
                Refusal(f"line {note.line}", "a note alone: no one highlight of its book is at its place")
            )
        else:
            owner.notes.append(note)
    for highlight in highlights:
        parts = [highlight.text, *(f"Note: {one.note}" for one in (highlight, *highlight.notes) if one.note)]
        if highlight.title or highlight.author:  # the card shows its source
            parts.append("— " + ", ".join(part for part in (highlight.title, highlight.author) if part))
        into = f"{highlight.source_ref}, location {highlight.location}"
        try:
            content = check_capturable("\n\n".join(parts), max_bytes)
        except RejectedContentError as exc:
            plan.refused.append(Refusal(highlight.source_ref, str(exc)))
            plan.refused += [
                Refusal(f"line {one.line}", f"part of {into}, which was left out") for one in highlight.notes
            ]
            continue
        plan.items.append(
            ImportItem(
                source_type=SourceType.TEXT,
                content=content,
                source_ref=highlight.source_ref,
                tags=highlight.tags,
                captured_at=highlight.added.moment,
                identity=_identity(highlight, places),
                warnings=highlight.added.warnings,
            )
        )
        plan.merged += [Merge(source_ref=f"line {one.line}", into=into, reason=_NOTED) for one in highlight.notes]
    ticker.finish()
    return plan


def _highlight(line: int, row: dict[str, str]) -> _Highlight:
    title = row.get("book title") or row.get("title", "")
    author = row.get("book author") or row.get("author", "")
    book = " — ".join(part for part in (title, author) if part)
    tags = [*split_tags(row.get("tags", ""), ","), *split_tags(row.get("document tags", ""), ",")]
    return _Highlight(
        line=line,
        title=title,
        author=author,
        location=row.get("location", ""),
        source_ref=row.get("url", "") or book or f"line {line}",
        text=row.get("highlight", "") if row.get("highlight", "").strip() else "",
        note=row.get("note", ""),
        tags=unique(tags),
        added=read_time(row.get("highlighted at") or row.get("date", ""), TimeFormat.ISO, TimeFormat.ENGLISH),
        highlight_id=next((row[name] for name in _HIGHLIGHT_IDS if row.get(name)), None),
    )


def _identity(highlight: _Highlight, places: Counter[tuple[str, str, str]]) -> str | None:
    """What the highlight is across exports: its id, else its book's title and its location. A location that
    several highlights of the book share (a page holds many) tells none of them apart: their content does."""
    if highlight.highlight_id:
        return highlight.highlight_id
    if highlight.location and places[highlight.place] == 1:
        return f"{highlight.title}|{highlight.location}"
    return None


def parse_readwise_date(text: str) -> datetime | None:
    """ISO-8601 (``2024-03-04 22:11:12+00:00``) or ``March 4, 2024 10:11 PM``; anything else, or a time that
    cannot be true, is no time."""
    return read_time(text, TimeFormat.ISO, TimeFormat.ENGLISH).moment
