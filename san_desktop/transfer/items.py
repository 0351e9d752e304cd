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
    POCKET = "pocket"  # Pocket's export: the classic ril_export.html, or the CSV
    READWISE = "readwise"  # Readwise's highlights CSV
    KINDLE = "kindle"  # Kindle's My Clippings.txt
    KARAKEEP = "karakeep"  # Karakeep's (formerly Hoarder's) JSON export
    LINKWARDEN = "linkwarden"  # Linkwarden's JSON backup
    OMNIVORE = "omnivore"  # Omnivore's JSON export (metadata_*.json, alone or in its zip)
    OPML = "opml"  # an OPML outline of links (feed readers, outliners)
    BACKUP = "backup"  # a full backup made by `san export all` (restored, not merged)


@dataclass(frozen=True)
class GivenCard:
    """The card an item's source holds already (a note of SAN's own Markdown export): the first card of its scrap
    keeps these instead of the analysis's."""

    title: str
    summary: str
    category: str | None = None


@dataclass(frozen=True)
class ImportItem:
    """One scrap to be: ``content`` is its text, or for ``SourceType.URL`` the address whose page the fetch
    job downloads. ``source_ref`` says where it came from (a note's relative path, the address, the book; "" when
    the source says it has no origin)."""

    source_type: SourceType
    content: str
    source_ref: str
    title: str | None = None
    tags: tuple[str, ...] = ()  # kept as the card's tags (front matter tags, bookmark folders, Pocket tags)
    captured_at: datetime | None = None  # timezone-aware; None: the time of the import
    # what the item is in its source across imports (a vault's note by its path, a Kindle highlight by its book
    # and location, a Readwise highlight by its id): imported again, it updates the scrap it made before. None:
    # its content (a link: its address) is all that tells it from another item
    identity: str | None = None
    # what was wrong with it that did not keep it out, in words for the person ("its front matter did not parse")
    warnings: tuple[str, ...] = ()
    card: GivenCard | None = None
    entry: str | None = None  # where in the source it is (a note's path), when ``source_ref`` names something else


@dataclass(frozen=True)
class Merge:
    """An entry of the source that came in as part of another item (a Kindle note, with its highlight; an
    entry listed twice), in words for the person."""

    source_ref: str
    into: str  # the ``source_ref`` of the item it is part of
    reason: str


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
    merged: list[Merge] = field(default_factory=list)
