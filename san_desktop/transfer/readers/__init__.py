"""Readers of the sources issue 28 imports: each turns a folder or file into an ``ImportPlan`` (items and
refusals) without touching the database; the importer stores the plan as one batch.

Long reads call ``progress`` with the number of entries read so far (at the start, every hundred entries and
at the end) and stop with ``ImportCancelled`` as soon as ``cancelled()`` is true."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

from san_desktop.core.errors import SanError
from san_desktop.core.text import DEFAULT_MAX_CAPTURE_BYTES
from san_desktop.transfer.items import ImportKind, ImportPlan
from san_desktop.transfer.readers._common import ImportCancelled, Ticker, read_source_text
from san_desktop.transfer.readers.bookmarks import read_bookmarks
from san_desktop.transfer.readers.csv_sources import read_pocket, read_readwise
from san_desktop.transfer.readers.detect import UNSUPPORTED, detect_kind, missing
from san_desktop.transfer.readers.json_exports import (
    read_karakeep,
    read_linkwarden,
    read_omnivore,
    read_omnivore_zip,
)
from san_desktop.transfer.readers.kindle import read_kindle
from san_desktop.transfer.readers.link_exports import is_html, read_opml, read_pocket_html
from san_desktop.transfer.readers.markdown import read_markdown

__all__ = ["UNSUPPORTED", "ImportCancelled", "detect_kind", "read_plan"]


def read_plan(
    path: Path,
    kind: ImportKind | None = None,
    *,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[int], None] | None = None,
    max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
) -> ImportPlan:
    """What ``path`` would bring in, read as ``kind`` (detected from its content when None). ``max_bytes``
    bounds each note or highlight, as ``capture.max_bytes`` bounds a capture."""
    if not path.exists():
        raise missing(path)
    kind = kind or detect_kind(path)
    if kind is ImportKind.BACKUP:
        raise SanError(
            f"{path.name} is a SAN Desktop backup: a backup is restored whole into an empty data folder, not "
            f"imported into this library (`san --data-dir NEW-FOLDER import {path.name}`, then "
            "`san-desktop --data-dir NEW-FOLDER`)."
        )
    if kind is ImportKind.MARKDOWN:
        if not path.is_dir():
            raise SanError(f"{UNSUPPORTED} ({path.name} is not a folder).")
        return read_markdown(path, Ticker(cancelled, progress), max_bytes)
    if path.is_dir():
        raise SanError(f"{UNSUPPORTED} ({path.name} is a folder, not a {kind} file).")
    if not path.is_file():  # (a pipe opened to be read waits for a writer that never comes)
        raise SanError(f"{UNSUPPORTED} ({path.name} is not a regular file: a pipe, a socket or a device).")
    if kind is ImportKind.OMNIVORE and zipfile.is_zipfile(path):
        return read_omnivore_zip(path, Ticker(cancelled, progress))
    text = read_source_text(path)
    ticker = Ticker(cancelled, progress)
    source = str(path)
    if kind is ImportKind.BOOKMARKS:
        return read_bookmarks(text, source, ticker)
    if kind is ImportKind.POCKET:
        if is_html(text):  # the classic ril_export.html; the CSV starts with its column names
            return read_pocket_html(text, source, ticker)
        return read_pocket(text, source, ticker)
    if kind is ImportKind.READWISE:
        return read_readwise(text, source, ticker, max_bytes)
    if kind is ImportKind.OPML:
        return read_opml(text, source, ticker)
    if kind is ImportKind.KARAKEEP:
        return read_karakeep(text, source, ticker, max_bytes)
    if kind is ImportKind.LINKWARDEN:
        return read_linkwarden(text, source, ticker)
    if kind is ImportKind.OMNIVORE:
        return read_omnivore(text, source, ticker)
    return read_kindle(text, source, ticker, max_bytes)
