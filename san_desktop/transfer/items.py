"""What an import source holds, read and not yet stored: the readers under ``transfer.readers`` make these from
a folder or file; the importer stores them as one batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from san_desktop.core.enums import SourceType


class ImportKind(StrEnum):
    MARKDOWN = "markdown"  # a folder of Markdown/text notes, or an Obsidian vault
    BOOKMARKS = "bookmarks"  # a browser's bookmarks file (Netscape HTML)
    POCKET = "pocket"  # Pocket's CSV export
    READWISE = "readwise"  # Readwise's highlights CSV
    KINDLE = "kindle"  # Kindle's My Clippings.txt
    BACKUP = "backup"  # a full backup made by `san export all` (restored, not merged)


@dataclass(frozen=True)
class ImportItem:
    """One scrap to be: ``content`` is its text, or for ``SourceType.URL`` the address whose page the fetch
    job downloads. ``source_ref`` says where it came from (a note's relative path, the address, the book)."""

    source_type: SourceType
    content: str
    source_ref: str
    title: str | None = None
    tags: tuple[str, ...] = ()  # kept as the card's tags (front matter tags, bookmark folders, Pocket tags)
    captured_at: datetime | None = None  # timezone-aware; None: the time of the import


@dataclass(frozen=True)
class Refusal:
    """Something of the source that will not come in, and why, in words for the person."""

    source_ref: str
    reason: str


@dataclass
class ImportPlan:
    """What a source would bring in: the preview of a dry run, and what the importer stores."""

    kind: ImportKind
    source: str  # the file or folder, as the person named it
    items: list[ImportItem] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
