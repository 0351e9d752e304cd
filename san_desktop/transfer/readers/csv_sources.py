"""Pocket's and Readwise's CSV exports. Columns are found by name, whatever their case or order: Pocket
(``title,url,time_added,tags,status``) gives URL items; Readwise, in its full export
(``Highlight,Book Title,Book Author,…,Highlighted at,Document tags``) or the short form
(``Highlight,Title,Author,URL,Note,Location,Date``), gives one text item per highlight."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.text import RejectedContentError, check_capturable
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import (
    Ticker,
    from_epoch,
    is_web_address,
    parse_english_date,
    parse_iso,
    split_tags,
    unique,
)


def header(text: str) -> list[str]:
    """The column names of a CSV's first row, lowercased and trimmed (for detection and reading alike)."""
    first = next(csv.reader(io.StringIO(text, newline="")), [])
    return [name.strip().lower() for name in first]


def _rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Each row after the header as its line number and a mapping from the lowercased column name to the
    trimmed value ('' for a missing one)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        names = [name.strip().lower() for name in next(reader, [])]
        for row in reader:
            if not any(value.strip() for value in row):
                continue
            values = {name: value.strip() for name, value in zip(names, row, strict=False)}
            yield reader.line_num, {name: values.get(name, "") for name in names}
    except csv.Error as exc:
        raise SanError(f"The CSV file is damaged near line {reader.line_num}: {exc}.") from exc


def read_pocket(text: str, source: str, ticker: Ticker) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.POCKET, source=source)
    for line, row in _rows(text):
        ticker.tick()
        address, title = row.get("url", ""), row.get("title", "")
        if not is_web_address(address):
            plan.refused.append(Refusal(address or title or f"line {line}", "not a web address"))
            continue
        plan.items.append(
            ImportItem(
                source_type=SourceType.URL,
                content=address,
                source_ref=address,
                title=title if title and title != address else None,  # Pocket writes the address when it had no title
                tags=unique(split_tags(row.get("tags", ""), r"\|")),
                captured_at=from_epoch(row.get("time_added", "")),
            )
        )
    ticker.finish()
    return plan


def read_readwise(text: str, source: str, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.READWISE, source=source)
    for line, row in _rows(text):
        ticker.tick()
        title = row.get("book title") or row.get("title", "")
        author = row.get("book author") or row.get("author", "")
        address = row.get("url", "")
        book = " — ".join(part for part in (title, author) if part)
        source_ref = address or book or f"line {line}"
        highlight, note = row.get("highlight", ""), row.get("note", "")
        if not highlight.strip():
            plan.refused.append(Refusal(source_ref, "an empty highlight"))
            continue
        parts = [highlight]
        if note:
            parts.append(f"Note: {note}")
        if title or author:
            parts.append("— " + ", ".join(part for part in (title, author) if part))  # the card shows its source
        try:
            content = check_capturable("\n\n".join(parts), max_bytes)
        except RejectedContentError as exc:
            plan.refused.append(Refusal(source_ref, str(exc)))
            continue
        tags = [*split_tags(row.get("tags", ""), ","), *split_tags(row.get("document tags", ""), ",")]
        plan.items.append(
            ImportItem(
                source_type=SourceType.TEXT,
                content=content,
                source_ref=source_ref,
                tags=unique(tags),
                captured_at=parse_readwise_date(row.get("highlighted at") or row.get("date", "")),
            )
        )
    ticker.finish()
    return plan


def parse_readwise_date(text: str) -> datetime | None:
    """ISO-8601 (``2024-03-04 22:11:12+00:00``) or ``March 4, 2024 10:11 PM``; anything else is no time."""
    return parse_iso(text) or parse_english_date(text)
