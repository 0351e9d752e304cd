"""The library's links as a browser's bookmarks file (the Netscape format: ``<!DOCTYPE NETSCAPE-Bookmark-file-1>``),
which browsers, Karakeep and Linkwarden import, and ``transfer.readers.bookmarks`` reads back: one ``<A>`` per
live link scrap, oldest first, with its page's title (its card's, else its address), the time it was captured
(``ADD_DATE``, seconds since 1970) and its card's tags (``TAGS``, separated by commas).

The file is written as the Anki package is (``core.user_files``): a new file, or with ``overwrite`` a regular
file replaced once the new one is whole; a link, a folder or a device is never written to."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from san_desktop.core.enums import SourceType
from san_desktop.core.urls import is_web_url
from san_desktop.core.user_files import check_target, write_file
from san_desktop.db.database import Database
from san_desktop.db.models import KnowledgeCard, Scrap
from san_desktop.transfer.files import NothingToExportError, writing
from san_desktop.transfer.library import counted, tags_of

_HEADER = """<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file.
     It will be read and overwritten.
     DO NOT EDIT! -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
"""
_FOOTER = "</DL><p>\n"


@dataclass(frozen=True)
class Bookmark:
    address: str
    title: str
    added: datetime
    tags: tuple[str, ...]


@dataclass(frozen=True)
class BookmarksExport:
    path: Path
    links: int
    replaced: bool = False  # a file was there (``overwrite``) and the bookmarks took its place
    dry_run: bool = False  # nothing was written

    @property
    def summary(self) -> str:
        what = f"{counted(self.links, 'link')} as bookmarks to {self.path}"
        if self.dry_run:
            return f"Would export {what}{' (replacing it)' if self.replaced else ''}; nothing was written"
        return f"Exported {what}"


def read_links(db: Database) -> list[Bookmark]:
    """Every live link scrap with a web address, oldest capture first (a link without a card yet has no tags)."""
    with db.sessions() as session:
        rows = session.execute(
            sa.select(Scrap.source_ref, Scrap.title, KnowledgeCard.title, Scrap.created_at, KnowledgeCard.id)
            .outerjoin(KnowledgeCard, KnowledgeCard.scrap_id == Scrap.id)
            .where(Scrap.source_type == SourceType.URL, Scrap.deleted_at.is_(None))
            .order_by(Scrap.created_at, Scrap.id)
        ).all()
        tags = tags_of(session, [row[4] for row in rows if row[4] is not None])
    found = []
    for address, page_title, card_title, added, card_id in rows:
        address = (address or "").strip()
        if not is_web_url(address):  # (never a ``javascript:`` address a browser would run)
            continue
        title = " ".join((page_title or card_title or "").split()) or address
        card_tags = tuple(sorted(tags.get(card_id, ()), key=str.casefold)) if card_id else ()
        found.append(Bookmark(address, title, added, card_tags))
    return found


def _tag(tag: str) -> str:
    """A comma would split the tag in two: it becomes a space."""
    return " ".join(tag.replace(",", " ").split())


def bookmark_line(bookmark: Bookmark) -> str:
    tags = ",".join(tag for tag in map(_tag, bookmark.tags) if tag)
    attributes = f'HREF="{html.escape(bookmark.address)}" ADD_DATE="{int(bookmark.added.timestamp())}"'
    if tags:
        attributes += f' TAGS="{html.escape(tags)}"'
    return f"    <DT><A {attributes}>{html.escape(bookmark.title)}</A>\n"


def bookmarks_html(bookmarks: Sequence[Bookmark]) -> str:
    return _HEADER + "".join(map(bookmark_line, bookmarks)) + _FOOTER


def check_destination(path: Path, *, overwrite: bool = False) -> bool:
    """Refuse what must not be written or replaced (``core.user_files.check_target``); whether a file is there
    to be replaced."""
    return check_target(
        path,
        suffix=".html",
        why="browsers import bookmarks files named so",
        example="bookmarks.html",
        overwrite=overwrite,
    )


def export_bookmarks(db: Database, path: Path, *, overwrite: bool = False, dry_run: bool = False) -> BookmarksExport:
    """Write the live links as a bookmarks file. An existing file is replaced only with ``overwrite`` (and never
    a link, a folder or a device); ``dry_run`` says what it would write, and writes nothing."""
    replaced = check_destination(path, overwrite=overwrite)
    bookmarks = read_links(db)
    if not bookmarks:
        raise NothingToExportError("links")
    result = BookmarksExport(path, len(bookmarks), replaced, dry_run)
    if not dry_run:
        data = bookmarks_html(bookmarks).encode("utf-8")
        with writing(path, "the bookmarks"):
            write_file(path, lambda temporary: temporary.write_bytes(data), overwrite=overwrite)
    return result
