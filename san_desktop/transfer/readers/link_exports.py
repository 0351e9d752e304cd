"""Lists of links that read-later apps and feed readers export: Pocket's classic ``ril_export.html`` and OPML
outlines; and what every reader of a list of links shares: ``LinkList`` (each address once, the rest refused or
merged with a reason) and ``capture_time`` (a date as the source holds it, kept only when it could be true).

Pocket's HTML export is ``<h1>Unread</h1><ul><li><a href time_added tags>Title</a></li>…</ul>`` and then the
same under ``<h1>Read Archive</h1>``; whether a link was read is not what it is about, so it is no tag. An OPML
file is ``<opml><body><outline …/></body></opml>``: an outline with an address is a link (a feed reader's
``htmlUrl``, an outliner's ``url``, else the feed's ``xmlUrl``), the outlines without one that hold it are its
folders and become its tags."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.text import preview
from san_desktop.core.urls import normalize_url
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers._common import (
    Ticker,
    TimeFormat,
    TimeRead,
    is_web_address,
    plausible,
    read_time,
    split_tags,
    unique,
)

POCKET_TITLE = "Pocket Export"
LISTED_TWICE = "listed twice"
NO_ADDRESS = "no address"
_POCKET_HTML = re.compile(r"<title>\s*pocket export\s*</title>|<a\s[^>]*\btime_added\s*=", re.IGNORECASE)
_OPML_ROOT = re.compile(r"<opml[\s>]", re.IGNORECASE)
# a DTD can define entities that expand without end (the "billion laughs") or read other files; OPML needs none
_DECLARATION = re.compile(r"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_OPML_CHUNK = 64 * 1024  # fed to the parser a chunk at a time, so a long file can be cancelled


def not_a_web_address(address: str) -> str:
    return f"not a web address: {preview(address, 200)}"


def capture_time(raw: object, *formats: TimeFormat) -> TimeRead:
    """``_common.read_time`` of a value as a source holds it: an attribute's text, or a JSON number or string
    (missing or null is no time)."""
    return read_time("" if raw is None else str(raw), *formats)


class LinkList:
    """The items of a plan being read: a link whose normalised address came before is not a second item but a
    ``Merge`` into the first (which gains its tags, and its title when it had none)."""

    def __init__(self, plan: ImportPlan) -> None:
        self.plan = plan
        self._first: dict[str, int] = {}  # normalised address → index of its item in plan.items

    def add_link(
        self,
        address: str,
        *,
        title: str | None,
        tags: Iterable[str] = (),
        captured_at: datetime | None = None,
        warnings: Iterable[str] = (),
        label: str = "an entry",
    ) -> None:
        """Add the link ``address`` (as written in the source), or refuse it naming it, or ``label`` when
        it has no address."""
        address = address.strip()
        title = " ".join(title.split()) if title else None
        if not address:
            self.plan.refused.append(Refusal(title or label, NO_ADDRESS))
            return
        if not is_web_address(address):
            self.plan.refused.append(Refusal(title or preview(address, 200), not_a_web_address(address)))
            return
        key = normalize_url(address)
        if key in self._first:
            index = self._first[key]
            first = self.plan.items[index]
            self.plan.items[index] = dataclasses.replace(
                first, title=first.title or title, tags=unique([*first.tags, *tags])
            )
            self.plan.merged.append(Merge(address, into=first.source_ref, reason=LISTED_TWICE))
            return
        self._first[key] = len(self.plan.items)
        self.plan.items.append(
            ImportItem(
                source_type=SourceType.URL,
                content=address,
                source_ref=address,
                title=title if title != address else None,  # an app writes the address when it had no title
                tags=unique(tags),
                captured_at=captured_at,
                warnings=tuple(warnings),
            )
        )


# Pocket's ril_export.html


def looks_like_pocket_html(text: str) -> bool:
    """Whether the start of a file is Pocket's HTML export: its title, or links carrying ``time_added``."""
    return _POCKET_HTML.search(text) is not None


def is_html(text: str) -> bool:
    """Whether a Pocket export is the HTML one rather than the CSV (whose first row is its column names)."""
    return text.lstrip("\ufeff \t\r\n").startswith("<")


def read_pocket_html(text: str, source: str, ticker: Ticker) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.POCKET, source=source)
    parser = _PocketParser(LinkList(plan), ticker)
    parser.feed(text)
    parser.close()
    parser.flush_link()
    ticker.finish()
    return plan


class _PocketParser(HTMLParser):
    def __init__(self, links: LinkList, ticker: Ticker) -> None:
        super().__init__(convert_charrefs=True)
        self._links = links
        self._ticker = ticker
        self._link: dict[str, str | None] | None = None  # the attributes of the <a> being read
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("a", "li", "ul", "h1"):
            self.flush_link()  # a link left unclosed ends where the next entry begins
        if tag == "a":
            self._link = dict(attrs)
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("a", "li", "ul"):
            self.flush_link()

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._text.append(data)

    def flush_link(self) -> None:
        if self._link is None:
            return
        attributes, self._link = self._link, None
        self._ticker.tick()
        time = capture_time(attributes.get("time_added"), TimeFormat.EPOCH)
        self._links.add_link(
            attributes.get("href") or "",
            title="".join(self._text),
            tags=split_tags(attributes.get("tags") or "", ","),
            captured_at=time.moment,
            warnings=time.warnings,
            label=f"link {self._ticker.count}",
        )


# OPML


def looks_like_opml(text: str) -> bool:
    """Whether the start of a file opens an OPML document (after its XML declaration and comments)."""
    return _OPML_ROOT.search(text[:4096]) is not None


def read_opml(text: str, source: str, ticker: Ticker) -> ImportPlan:
    name = Path(source).name
    if _DECLARATION.search(text):
        raise SanError(
            f"{name} is not an OPML file SAN Desktop reads: it declares a document type or entities, which an "
            "outline of links never needs (and which can make a small file expand without end)."
        )
    plan = ImportPlan(kind=ImportKind.OPML, source=source)
    links = LinkList(plan)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    depth = 0
    in_body = saw_body = False
    outlines: list[_Open] = []  # the outlines open around the one being read, outermost first
    try:
        for start in range(0, len(text), _OPML_CHUNK):
            parser.feed(text[start : start + _OPML_CHUNK])
            for event, element in parser.read_events():  # type: ignore[misc]  # the stub unites every event kind
                if not isinstance(element, ET.Element):  # only start and end events are asked for
                    continue
                tag = _local(element.tag)
                if event == "start":
                    depth += 1
                    if depth == 1 and tag != "opml":
                        raise SanError(f"{name} is not an OPML file: its root element is <{preview(tag, 40)}>.")
                    if depth == 2 and tag == "body":
                        in_body = saw_body = True
                    elif in_body and tag == "outline":
                        if outlines:
                            outlines[-1].has_children = True
                        outlines.append(_opened(element, outlines, links, ticker))
                    continue
                depth -= 1
                if in_body and tag == "outline" and outlines:
                    closed = outlines.pop()
                    if closed.is_folder and not closed.has_children:  # neither a link nor a folder of any
                        ticker.tick()
                        links.add_link("", title=closed.text, label=f"outline {ticker.count}")
                elif depth == 1 and tag == "body":
                    in_body = False
                element.clear()  # only the open outlines are needed: memory stays bounded
            ticker.check()
        parser.close()
    except ET.ParseError as exc:
        line, column = exc.position
        raise SanError(
            f"{name} is not a readable OPML file: its XML is broken at line {line}, column {column + 1}."
        ) from None
    if not saw_body:
        raise SanError(f"{name} is not an OPML file: it has no <body> of outlines.")
    ticker.finish()
    return plan


@dataclasses.dataclass
class _Open:
    text: str | None
    is_folder: bool  # an outline without an address: its links are tagged with its text
    has_children: bool = False


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _opened(element: ET.Element, outlines: list[_Open], links: LinkList, ticker: Ticker) -> _Open:
    """Read an ``<outline>`` as it opens: a link is added at once, a folder waits for what it holds."""
    attributes = {_local(key).lower(): value.strip() for key, value in element.attrib.items()}
    text = attributes.get("text") or attributes.get("title") or None
    written = [address for key in ("htmlurl", "url", "xmlurl") if (address := attributes.get(key, ""))]
    if not written:
        return _Open(text, is_folder=True)
    ticker.tick()
    time = _opml_time(attributes.get("created", ""))
    links.add_link(
        next((address for address in written if is_web_address(address)), written[0]),
        title=text,
        tags=[outline.text for outline in outlines if outline.is_folder and outline.text],
        captured_at=time.moment,
        warnings=time.warnings,
    )
    return _Open(text, is_folder=False)


def _opml_time(text: str) -> TimeRead:
    """An outline's ``created``, in RFC 822 as OPML 2.0 writes it (``Mon, 04 Mar 2024 22:11:12 GMT``), else
    as ISO 8601 as some outliners write it."""
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return read_time(text, TimeFormat.ISO)
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if not plausible(moment):
        return TimeRead(None, f"its date “{text}” (the year {moment.year}) cannot be right: it is dated by the import")
    return TimeRead(moment)
