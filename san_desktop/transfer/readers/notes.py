"""One Markdown or text note as an import item: its YAML front matter read for title, aliases, tags, date and source
and taken out of the text, the inline ``#tags`` of its text (``#a/b`` nested ones too) added to the front matter's,
and wikilinks left in the text as they are.

A front matter that does not parse is not taken as text: the note's body is used and the item says so (a card whose
summary was the YAML reached its TIL, its Anki card and its quizzes). A note of SAN Desktop's own Markdown export
(``transfer.markdown_export``) brings its card back as it was: the text between the export's markers is the scrap's,
and the title, summary and category are the card's (``GivenCard``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from san_desktop.core.enums import SourceType
from san_desktop.core.inputs import read_file
from san_desktop.core.text import RejectedContentError, check_capturable, decode_bytes
from san_desktop.transfer.items import GivenCard, ImportItem
from san_desktop.transfer.readers._common import aware, parse_iso, split_tags, unique

_TAG_KEYS = ("tags", "tag")  # Obsidian accepts both
_ALIAS_KEYS = ("aliases", "alias")
_DATE_KEYS = ("date", "created", "created_at")
_SOURCE_KEYS = ("source", "url", "link")
_CLOSING_FENCES = frozenset({"---", "..."})
_HEADING = re.compile(r"^#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
# Obsidian's inline tag: after the start of a line or a space, letters, digits, _ - / (not digits alone); a
# heading's "# " and an address's "page#part" are no tags
_INLINE_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]*[^\W\d][\w/-]*)", re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]*`")

# What SAN Desktop's Markdown export writes around a card's parts (HTML comments: Obsidian shows none of them).
SAN_KEY = "san_id"
SAN_KIND = "san_kind"  # "til" on a day's TIL
TEXT_START = "<!-- san:text -->"
TEXT_END = "<!-- /san:text -->"
SUMMARY_START = "<!-- san:summary -->"
SUMMARY_END = "<!-- /san:summary -->"


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Any]
    body: str
    problems: tuple[str, ...] = field(default=())


def read_note(path: Path, ref: str, max_bytes: int, vault: str | None = None) -> ImportItem:
    """One note as an item; ``RejectedContentError`` (binary, not text, empty, too large) says why not. A link
    at ``path`` is not followed (the walk resolved it). ``vault``: the folder imported, which with ``ref`` is
    the note's identity (imported again, an edited note updates its scrap)."""
    text = decode_bytes(read_file(path, max_bytes, follow_links=False), path.name)
    front = split_front_matter(text)
    fields = front.fields
    if _exported_til(fields):
        raise RejectedContentError(
            "a day's TIL of a SAN Desktop export: its cards come in, and the day's TIL is written again from them"
        )
    exported = _exported(fields, front.body)
    content = check_capturable(exported[0] if exported else front.body, max_bytes)
    source = _source(fields)
    tags = [*_tags(fields), *([] if exported else inline_tags(content))]
    identity = f"san:{fields[SAN_KEY]}" if exported else (f"{vault}/{ref}" if vault is not None else None)
    return ImportItem(
        source_type=SourceType.FILE,
        content=content,
        source_ref=source or ("" if exported else ref),  # (an exported card without a source has none)
        title=_title(fields, content) or _alias(fields) or path.stem,
        tags=unique(tags),
        captured_at=_captured_at(fields),
        identity=identity,
        warnings=front.problems,
        card=exported[1] if exported else None,
        entry=ref,
    )


def split_front_matter(text: str) -> FrontMatter:
    """The YAML block that opens a note (``---`` … ``---`` or ``...``) read and cut off. A block that is not YAML
    is cut off too, and named in ``problems``; one that is YAML but no mapping of fields (a note that merely opens
    with a rule) stays in the body as text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter({}, text)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in _CLOSING_FENCES), None)
    if end is None:
        return FrontMatter({}, text)
    body = "\n".join(lines[end + 1 :])
    try:
        fields = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        return FrontMatter({}, body, (f"its front matter did not parse{where} ({problem}): its fields were not read",))
    if fields is None:
        fields = {}  # an empty block: nothing to read, and nothing worth keeping
    if not isinstance(fields, dict):
        return FrontMatter({}, text)
    return FrontMatter({str(key).lower(): value for key, value in fields.items()}, body)


def inline_tags(text: str) -> list[str]:
    """The ``#tags`` written in a note's text, outside code (fenced blocks and `inline` code)."""
    tags: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            tags += [found.strip("/") for found in _INLINE_TAG.findall(_INLINE_CODE.sub(" ", line))]
    return [tag for tag in tags if tag]


def _exported_til(fields: dict[str, Any]) -> bool:
    """Whether a note is a day's TIL of SAN's Markdown export (those before ``san_kind`` were tagged ``til`` alone)."""
    if _scalar(fields.get(SAN_KEY)) is None:
        return False
    return fields.get(SAN_KIND) == "til" or (fields.get("tags") == ["til"] and "date" in fields)


def _exported(fields: dict[str, Any], body: str) -> tuple[str, GivenCard] | None:
    """A note of SAN's Markdown export: the scrap's text, and its card; None for any other note."""
    title = _scalar(fields.get("title"))
    if _scalar(fields.get(SAN_KEY)) is None or title is None:
        return None
    text = _between(body, TEXT_START, TEXT_END)
    summary = _between(body, SUMMARY_START, SUMMARY_END)
    if text is None or summary is None:
        return None  # (its markers edited away: an ordinary note)
    return text, GivenCard(title, summary, _scalar(fields.get("category")))


def _between(body: str, start: str, end: str) -> str | None:
    first = body.find(start)
    last = body.find(end, first + len(start)) if first >= 0 else -1
    if last < 0:
        return None
    return body[first + len(start) : last].strip("\n")


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


def _alias(fields: dict[str, Any]) -> str | None:
    for key in _ALIAS_KEYS:
        value = fields.get(key)
        for one in value if isinstance(value, list) else [value]:
            if text := _scalar(one):
                return text
    return None


def _source(fields: dict[str, Any]) -> str | None:
    """Where the note's text came from, as its front matter says (``source``, ``url`` or ``link``)."""
    for key in _SOURCE_KEYS:
        if text := _scalar(fields.get(key)):
            return text
    return None


def _tags(fields: dict[str, Any]) -> list[str]:
    """The front matter's tags: each of a list is one tag (a card's tag may hold a space); a string holds several."""
    tags: list[str] = []
    for key in _TAG_KEYS:
        value = fields.get(key)
        if isinstance(value, list):
            tags += [text.lstrip("#").strip() for one in value if (text := _scalar(one))]
        elif text := _scalar(value):
            tags += split_tags(text)
    return tags


def _captured_at(fields: dict[str, Any]) -> datetime | None:
    for key in _DATE_KEYS:
        value = fields.get(key)
        if isinstance(value, date):  # YAML reads unquoted dates and times itself; datetime is a date too
            return aware(value)
        if isinstance(value, str) and (parsed := parse_iso(value)):
            return parsed
    return None
