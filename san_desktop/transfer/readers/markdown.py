"""A folder of Markdown or text notes, or an Obsidian vault: one item per note, its YAML front matter read for
tags, title and date and taken out of the content. Attachments and unreadable notes are refused, each with why;
hidden files and folders (``.obsidian/``, ``.trash/``, ``.git/``) are passed over without a word.

Nothing outside the folder is read: a link is followed only to a note inside it (a linked folder never, so a
link loop cannot trap the walk), and pipes, sockets and devices are not opened; each is left out with why
(``core.user_files`` checks every part of each path)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.inputs import read_file
from san_desktop.core.text import RejectedContentError, check_capturable, decode_bytes
from san_desktop.core.user_files import Confined, kind_of
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import Ticker, aware, parse_iso, split_tags, unique

NOTE_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
_TAG_KEYS = ("tags", "tag")  # Obsidian accepts both
_DATE_KEYS = ("date", "created", "created_at")
_CLOSING_FENCES = frozenset({"---", "..."})
_HEADING = re.compile(r"^#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Any]
    body: str


def read_markdown(folder: Path, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.MARKDOWN, source=str(folder))
    root = Confined(folder.resolve())  # the folder the person named, reached through their own links once
    for path in _walk(root.root):
        ticker.tick()
        ref = path.relative_to(root.root).as_posix()
        note, reason = _note_path(root, ref)
        if note is None:
            plan.refused.append(Refusal(ref, reason))
        elif note.suffix.lower() not in NOTE_SUFFIXES:
            plan.refused.append(Refusal(ref, "an attachment, not a note"))
        else:
            try:
                plan.items.append(read_note(note, ref, max_bytes))
            except RejectedContentError as exc:
                plan.refused.append(Refusal(ref, str(exc)))
    ticker.finish()
    return plan


def _note_path(root: Confined, ref: str) -> tuple[Path | None, str]:
    """The regular file inside ``root`` that ``ref`` is or links to, else None and why it is left out."""
    found = root.status(ref)  # (every folder on the way checked: none is a link)
    path = root.path(ref)
    if found is None:
        return None, "gone while the folder was read"
    if stat.S_ISLNK(found.st_mode):
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root.root):
            return None, "a link out of the folder, not followed"
        found = root.status(target.relative_to(root.root).as_posix())
        if found is None:
            return None, "a link to nothing (its target is missing), not followed"
        if stat.S_ISDIR(found.st_mode):
            return None, "a link to a folder, not followed"
        path = target
    if stat.S_ISDIR(found.st_mode):
        return None, "a folder that could not be read"
    if not stat.S_ISREG(found.st_mode):
        return None, f"{kind_of(found.st_mode)}, not a note: not read"
    return path, ""


def _walk(folder: Path, *, top: bool = True) -> Iterator[Path]:
    """Every file under ``folder`` in a stable order (names sorted, a folder's files before its subfolders),
    hidden names left out. Linked folders are yielded, not entered, so a link loop cannot trap the walk; so is
    a subfolder that cannot be listed, to be refused by name."""
    try:
        entries = sorted((one for one in folder.iterdir() if not one.name.startswith(".")), key=lambda p: p.name)
    except OSError as exc:
        if top:
            raise SanError(f"Could not read the folder {folder}: {exc.strerror or exc}.") from exc
        yield folder
        return
    subfolders = []
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            subfolders.append(entry)
        else:
            yield entry
    for subfolder in subfolders:
        yield from _walk(subfolder, top=False)


def read_note(path: Path, ref: str, max_bytes: int) -> ImportItem:
    """One note as an item; ``RejectedContentError`` (binary, not text, empty, too large) says why not. A link
    at ``path`` is not followed (``_note_path`` resolved it)."""
    text = decode_bytes(read_file(path, max_bytes, follow_links=False), path.name)
    front = split_front_matter(text)
    content = check_capturable(front.body, max_bytes)
    return ImportItem(
        source_type=SourceType.FILE,
        content=content,
        source_ref=ref,
        title=_title(front.fields, content) or path.stem,
        tags=_tags(front.fields),
        captured_at=_captured_at(front.fields),
    )


def split_front_matter(text: str) -> FrontMatter:
    """The YAML block that opens a note (``---`` … ``---`` or ``...``) read and cut off. A block that is not a
    mapping of fields (broken YAML, or a note that merely opens with a rule) stays in the body as text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter({}, text)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in _CLOSING_FENCES), None)
    if end is None:
        return FrontMatter({}, text)
    try:
        fields = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return FrontMatter({}, text)
    if fields is None:
        fields = {}  # an empty block: nothing to read, and nothing worth keeping
    if not isinstance(fields, dict):
        return FrontMatter({}, text)
    return FrontMatter({str(key).lower(): value for key, value in fields.items()}, "\n".join(lines[end + 1 :]))


def _scalar(value: Any) -> str | None:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value).strip() or None
    return None


def _title(fields: dict[str, Any], content: str) -> str | None:
    title = _scalar(fields.get("title"))
    if title:
        return title
    fenced = False
    for line in content.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced  # a "# comment" in a code block is no heading
        elif not fenced and (heading := _HEADING.match(line)):
            return heading.group(1).strip()
    return None


def _tags(fields: dict[str, Any]) -> tuple[str, ...]:
    tags: list[str] = []
    for key in _TAG_KEYS:
        value = fields.get(key)
        values = value if isinstance(value, list) else [value]
        for one in values:
            text = _scalar(one)
            if text:
                tags.extend(split_tags(text))
    return unique(tags)


def _captured_at(fields: dict[str, Any]) -> datetime | None:
    for key in _DATE_KEYS:
        value = fields.get(key)
        if isinstance(value, date):  # YAML reads unquoted dates and times itself; datetime is a date too
            return aware(value)
        if isinstance(value, str) and (parsed := parse_iso(value)):
            return parsed
    return None
