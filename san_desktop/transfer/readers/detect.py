"""Which kind of source a path is, told from what it holds rather than its name alone: a backup is a zip with
SAN Desktop's manifest, bookmarks carry the Netscape doctype, the CSVs are told apart by their columns, Kindle's
clippings by their separators; Pocket's HTML by its title or its links' ``time_added``, OPML by its root element,
the JSON exports by their keys, Omnivore's zip by its ``metadata_*.json`` files."""

from __future__ import annotations

import zipfile
from pathlib import Path

from san_desktop.core.errors import SanError
from san_desktop.transfer.backup import BACKUP_FORMAT
from san_desktop.transfer.backup_reader import opened_backup, parsed_manifest
from san_desktop.transfer.items import ImportKind
from san_desktop.transfer.readers._common import looks_binary
from san_desktop.transfer.readers.bookmarks import DOCTYPE
from san_desktop.transfer.readers.csv_sources import header
from san_desktop.transfer.readers.json_exports import is_omnivore_zip, json_kind
from san_desktop.transfer.readers.kindle import looks_like_clippings
from san_desktop.transfer.readers.link_exports import looks_like_opml, looks_like_pocket_html

# kept starting as it did before the lists of links were added: callers and tests match its start
UNSUPPORTED = (
    "Not a file SAN Desktop can import: expected a folder of Markdown notes, a bookmarks .html file, a Pocket or "
    "Readwise .csv, Kindle's My Clippings.txt or a SAN backup .zip, or a list of links: Pocket's ril_export.html, "
    "an .opml outline, Karakeep's or Linkwarden's .json export, or Omnivore's export .zip or metadata .json"
)
_HEAD_BYTES = 256 * 1024  # enough to hold a CSV's header or several clippings


def missing(path: Path) -> SanError:
    return SanError(f"Nothing to import at {path}: no such file or folder.")


def detect_kind(path: Path) -> ImportKind:
    """The kind of ``path``; ``SanError`` when it is missing or nothing SAN Desktop imports."""
    if path.is_dir():
        return ImportKind.MARKDOWN
    if not path.exists():
        raise missing(path)
    if not path.is_file():
        raise SanError(f"{UNSUPPORTED} ({path.name} is not a regular file).")
    if zipfile.is_zipfile(path):
        if _is_backup(path):
            return ImportKind.BACKUP
        if is_omnivore_zip(path):
            return ImportKind.OMNIVORE
        raise SanError(f"{UNSUPPORTED} ({path.name} is a zip file without a SAN Desktop manifest).")
    head = _head_text(path)
    kind = _kind_of_text(head) if head is not None else None
    if kind is None:
        raise SanError(f"{UNSUPPORTED} ({path.name} is none of these).")
    return kind


def _is_backup(path: Path) -> bool:
    """Whether the zip's manifest names a backup, read within the restore's bounds (a small zip can list
    millions of members, or hold a manifest that inflates without end: refused with the restore's sentence);
    the restore says what else is wrong with a backup."""
    with opened_backup(path) as backup:
        try:
            manifest = parsed_manifest(backup)
        except SanError:
            return False
    return isinstance(manifest, dict) and manifest.get("format") == BACKUP_FORMAT


def _head_text(path: Path) -> str | None:
    """The start of a text file, decoded leniently (a character may be cut at the end); None for binary."""
    try:
        with path.open("rb") as file:
            data = file.read(_HEAD_BYTES)
    except OSError as exc:
        raise SanError(f"Could not read {path}: {exc.strerror or exc}.") from exc
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data[: len(data) // 2 * 2].decode("utf-16", errors="replace")
    if looks_binary(data):  # (a few stray NULs: a damaged export, whose reader leaves out their rows)
        return None
    return data.decode("utf-8-sig", errors="replace")


def _kind_of_text(text: str) -> ImportKind | None:
    start = text.lstrip("\ufeff \t\r\n")
    if DOCTYPE.lower() in start[:1024].lower():
        return ImportKind.BOOKMARKS
    if start.startswith("<") and looks_like_opml(start):
        return ImportKind.OPML
    if start.startswith("<") and looks_like_pocket_html(start):
        return ImportKind.POCKET
    if (kind := json_kind(start)) is not None:
        return kind
    columns = set(header(start.split("\n", 1)[0]))
    if {"url", "time_added"} <= columns:
        return ImportKind.POCKET
    if "highlight" in columns and columns & {"title", "book title"}:
        return ImportKind.READWISE
    if looks_like_clippings(text):
        return ImportKind.KINDLE
    return None
