"""The JSON exports of read-later and bookmark apps, read as their own code writes them:

- Karakeep (formerly Hoarder), ``{"bookmarks": [{createdAt, title, tags, lists, content, note, archived}],
  "lists": [{id, name, parentId, …}]}`` (``packages/shared/import-export/exporters.ts``): a link's ``content``
  is ``{"type": "link", "url"}``, a note's ``{"type": "text", "text"}``; images and PDFs are exported with none.
- Linkwarden's backup, the user with ``collections: [{id, name, parentId, links: [{name, url, description,
  tags: [{name}], importDate, createdAt}]}]`` (``apps/web/lib/api/controllers/migration/exportData.ts``).
- Omnivore's export, a zip of ``metadata_<from>_to_<to>.json`` lists of ``{id, slug, title, description,
  author, url, state, labels, savedAt, updatedAt, publishedAt}`` (``packages/api/src/jobs/export.ts``), read
  from the zip or one metadata file alone.

Collections and lists, with the ones they sit in, become tags as a bookmark's folders do; archived or read is
where a link was, not what it is about, so it is no tag."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.text import RejectedContentError, check_capturable, decode_bytes, preview
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import SOURCE_MAX_BYTES, Ticker, TimeFormat, unique
from san_desktop.transfer.readers.link_exports import LinkList, capture_time
from san_desktop.transfer.zip_guard import (
    UnsafeZipError,
    check_directory,
    check_member_format,
    json_depth,
    open_regular_file,
    read_member,
)

MAX_JSON_DEPTH = 32  # Linkwarden's backup, the deepest, nests 6 levels; json.loads recurses once a level
_ZIP_MAX_MEMBERS = 100_000
_ZIP_MAX_DIRECTORY_BYTES = 64_000_000
_ZIP_CHUNK = 1024 * 1024
_OMNIVORE_METADATA = re.compile(r"metadata_(\d+)_to_(\d+)\.json")
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}:]')


def json_kind(text: str) -> ImportKind | None:
    """Which export the start of a JSON file is, told by its keys: Karakeep's and Linkwarden's at the top,
    Omnivore's in the objects of its top-level list."""
    start = text.lstrip("\ufeff \t\r\n")
    if not start.startswith(("{", "[")):
        return None
    wanted = 1 if start.startswith("{") else 2
    keys: set[str] = set()
    depth = 0
    previous = ""
    for match in _JSON_TOKEN.finditer(start):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth <= 0:
                break
        elif token == ":" and depth == wanted and previous.startswith('"'):
            keys.add(previous[1:-1])
        previous = token
    if wanted == 1:
        if "bookmarks" in keys:
            return ImportKind.KARAKEEP
        if "collections" in keys:
            return ImportKind.LINKWARDEN
        return None
    return ImportKind.OMNIVORE if {"url", "savedAt"} <= keys and keys & {"slug", "labels"} else None


def load_json(text: str, name: str, what: str) -> object:
    """``text`` parsed, or a sentence naming ``name`` (the file) and what is wrong with it as ``what``."""
    if json_depth(text.encode("utf-8", "surrogatepass")) > MAX_JSON_DEPTH:
        raise SanError(f"{name} is not {what}: its JSON nests more than {MAX_JSON_DEPTH} levels deep.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SanError(
            f"{name} is not {what}: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})."
        ) from None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _names(values: object) -> list[str]:
    """Tag names from a list of strings or of ``{"name": …}`` objects; anything else is none."""
    if not isinstance(values, list):
        return []
    return [name for value in values if (name := _text(value.get("name") if isinstance(value, dict) else value))]


def _paths(groups: list[dict[str, object]]) -> dict[object, list[str]]:
    """Each group's name after the names of the groups it sits in, by its id (a loop of parents ends where it
    comes round again)."""
    by_id = {group.get("id"): group for group in groups if group.get("id") is not None}
    paths: dict[object, list[str]] = {}
    for key, group in by_id.items():
        names: list[str] = []
        seen: set[object] = set()
        current: dict[str, object] | None = group
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if name := _text(current.get("name")):
                names.insert(0, name)
            current = by_id.get(current.get("parentId"))
        paths[key] = names
    return paths


def _objects(values: object) -> list[dict[str, object]]:
    return [value for value in values if isinstance(value, dict)] if isinstance(values, list) else []


# Karakeep


def read_karakeep(text: str, source: str, ticker: Ticker, max_bytes: int) -> ImportPlan:
    name = Path(source).name
    data = load_json(text, name, "a Karakeep export")
    bookmarks = data.get("bookmarks") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(bookmarks, list):
        raise SanError(f'{name} is not a Karakeep export: it has no list of "bookmarks".')
    list_paths = _paths(_objects(data.get("lists")))
    plan = ImportPlan(kind=ImportKind.KARAKEEP, source=source)
    links = LinkList(plan)
    for number, bookmark in enumerate(bookmarks, 1):
        ticker.tick()
        if not isinstance(bookmark, dict):
            plan.refused.append(Refusal(f"bookmark {number}", "not a bookmark (an object was expected)"))
            continue
        title, note = _text(bookmark.get("title")), _text(bookmark.get("note"))
        in_lists = bookmark.get("lists")
        in_lists = in_lists if isinstance(in_lists, list) else []
        tags = [*(tag for key in in_lists for tag in list_paths.get(key, [])), *_names(bookmark.get("tags"))]
        time = capture_time(bookmark.get("createdAt"), TimeFormat.EPOCH)
        warnings, captured_at = list(time.warnings), time.moment
        content = bookmark.get("content")
        content = content if isinstance(content, dict) else {}
        kind = content.get("type")
        label = title or f"bookmark {number}"
        if kind == "link":
            if note and title:
                warnings.append("its note was not kept (a link keeps its title; the note stays in Karakeep)")
            links.add_link(
                _text(content.get("url")), title=title or note, tags=tags, captured_at=captured_at,
                warnings=warnings, label=label,
            )  # fmt: skip
        elif kind == "text":
            bookmark_id = _text(bookmark.get("id"))
            identity = f"karakeep:{bookmark_id}" if bookmark_id else None
            body = _text(content.get("text"))
            source_ref = identity or title or preview(body, 80) or label
            try:
                kept = check_capturable("\n\n".join([body, *([f"Note: {note}"] if note else [])]), max_bytes)
            except RejectedContentError as exc:
                plan.refused.append(Refusal(source_ref, str(exc)))
                continue
            plan.items.append(
                ImportItem(
                    source_type=SourceType.TEXT,
                    content=kept,
                    source_ref=source_ref,
                    title=title or None,
                    tags=unique(tags),
                    captured_at=captured_at,
                    identity=identity,
                    warnings=tuple(warnings),
                )
            )
        else:
            plan.refused.append(
                Refusal(label, "no address or text (Karakeep exports an image or PDF without its file)")
            )
    ticker.finish()
    return plan


# Linkwarden


def read_linkwarden(text: str, source: str, ticker: Ticker) -> ImportPlan:
    name = Path(source).name
    data = load_json(text, name, "a Linkwarden backup")
    if not isinstance(data, dict) or not isinstance(data.get("collections"), list):
        raise SanError(f'{name} is not a Linkwarden backup: it has no list of "collections".')
    collections = _objects(data["collections"])
    paths = _paths(collections)
    plan = ImportPlan(kind=ImportKind.LINKWARDEN, source=source)
    links = LinkList(plan)
    for collection in collections:
        path = paths.get(collection.get("id")) or [_text(collection.get("name"))]
        for link in _objects(collection.get("links")):
            ticker.tick()
            title, description = _text(link.get("name")), _text(link.get("description"))
            # importDate: when it was saved in the app it came from, before Linkwarden imported it
            time = capture_time(link.get("importDate") or link.get("createdAt"), TimeFormat.ISO)
            warnings, captured_at = list(time.warnings), time.moment
            if description and title:
                warnings.append("its description was not kept (a link keeps its name; the description stays in "
                                "Linkwarden)")  # fmt: skip
            links.add_link(
                _text(link.get("url")), title=title or description, tags=[*path, *_names(link.get("tags"))],
                captured_at=captured_at, warnings=warnings, label=f"link {link.get('id') or ticker.count}",
            )  # fmt: skip
    ticker.finish()
    return plan


# Omnivore


def read_omnivore(text: str, source: str, ticker: Ticker) -> ImportPlan:
    """One ``metadata_*.json`` of Omnivore's export."""
    plan = ImportPlan(kind=ImportKind.OMNIVORE, source=source)
    name = Path(source).name
    _read_omnivore_items(load_json(text, name, "an Omnivore export"), name, LinkList(plan), ticker)
    ticker.finish()
    return plan


def read_omnivore_zip(path: Path, ticker: Ticker) -> ImportPlan:
    """Every ``metadata_*.json`` of Omnivore's export zip, in the order they were written, each read within
    ``zip_guard``'s bounds."""
    plan = ImportPlan(kind=ImportKind.OMNIVORE, source=str(path))
    links = LinkList(plan)
    try:
        with _opened_zip(path) as archive:
            members = sorted(
                (info for info in archive.infolist() if _metadata_cursor(info.filename) is not None),
                key=lambda info: _metadata_cursor(info.filename) or 0,
            )
            if not members:
                raise SanError(f"{path.name} is not an Omnivore export: it holds no metadata_*.json file.")
            left = SOURCE_MAX_BYTES
            for info in members:
                ticker.check()
                check_member_format(info)
                data = bytearray()
                left -= read_member(archive, info, data.extend, left, _ZIP_CHUNK)
                shown = f"{path.name} ({info.filename})"
                text = decode_bytes(bytes(data), info.filename)
                _read_omnivore_items(load_json(text, shown, "an Omnivore export"), shown, links, ticker)
    except UnsafeZipError as exc:
        raise SanError(f"{path.name} cannot be read as an Omnivore export: {exc}.") from None
    except (zipfile.BadZipFile, EOFError) as exc:
        raise SanError(f"{path.name} cannot be read as an Omnivore export: the zip is damaged ({exc}).") from None
    ticker.finish()
    return plan


def is_omnivore_zip(path: Path) -> bool:
    """Whether the zip at ``path`` holds Omnivore's ``metadata_*.json`` files (its list of members read within
    bounds; a zip that cannot be read is not one)."""
    try:
        with _opened_zip(path) as archive:
            return any(_metadata_cursor(name) is not None for name in archive.namelist())
    except (UnsafeZipError, zipfile.BadZipFile, EOFError, OSError):
        return False


@contextmanager
def _opened_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    """``path`` opened as a zip when it is a regular file whose list of members is within bounds."""
    with open_regular_file(path) as file:
        check_directory(file, _ZIP_MAX_MEMBERS, _ZIP_MAX_DIRECTORY_BYTES)
        with zipfile.ZipFile(file) as archive:
            yield archive


def _metadata_cursor(member: str) -> int | None:
    match = _OMNIVORE_METADATA.fullmatch(PurePosixPath(member).name)
    return int(match[1]) if match else None


def _read_omnivore_items(data: object, name: str, links: LinkList, ticker: Ticker) -> None:
    if not isinstance(data, list):
        raise SanError(f"{name} is not an Omnivore export: it holds no list of saved items.")
    for number, entry in enumerate(_entries(data), 1):
        ticker.tick()
        if entry is None:
            links.plan.refused.append(Refusal(f"item {number}", "not a saved item (an object was expected)"))
            continue
        time = capture_time(entry.get("savedAt"), TimeFormat.ISO)
        warnings, captured_at = list(time.warnings), time.moment
        links.add_link(
            _text(entry.get("url")), title=_text(entry.get("title")), tags=_names(entry.get("labels")),
            captured_at=captured_at, warnings=warnings, label=_text(entry.get("slug")) or f"item {number}",
        )  # fmt: skip


def _entries(data: list[object]) -> Iterator[dict[str, object] | None]:
    for entry in data:
        yield entry if isinstance(entry, dict) else None
