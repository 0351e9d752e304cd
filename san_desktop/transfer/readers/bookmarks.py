"""A browser's bookmarks file (the Netscape format every browser exports): one URL item per link, tagged with
the folders it sits in. Browsers leave ``<DT>`` and ``<p>`` unclosed, so only ``<H3>``, ``<DL>`` and ``<A>``
are followed: a folder is the ``<H3>`` just before the ``<DL>`` that holds its links."""

from __future__ import annotations

from html.parser import HTMLParser

from san_desktop.core.enums import SourceType
from san_desktop.core.text import preview
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import Ticker, from_epoch, is_web_address, split_tags, unique

DOCTYPE = "<!DOCTYPE NETSCAPE-Bookmark-file-1>"
# The folders a browser makes itself: where a bookmark is, not what it is about.
ROOT_FOLDERS = frozenset(
    name.casefold()
    for name in (
        "Bookmarks bar", "Bookmarks Toolbar", "Bookmarks Menu", "Other bookmarks", "Mobile bookmarks",
        "Favorites bar", "Other favorites",
    )
)  # fmt: skip
# Attributes with which browsers mark those folders whatever their (translated) name.
_ROOT_FOLDER_FLAGS = ("personal_toolbar_folder", "unfiled_bookmarks_folder")


def read_bookmarks(text: str, source: str, ticker: Ticker) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.BOOKMARKS, source=source)
    parser = _BookmarksParser(plan, ticker)
    parser.feed(text)
    parser.close()
    parser.flush_link()
    ticker.finish()
    return plan


class _BookmarksParser(HTMLParser):
    def __init__(self, plan: ImportPlan, ticker: Ticker) -> None:
        super().__init__(convert_charrefs=True)
        self._plan = plan
        self._ticker = ticker
        self._folders: list[str | None] = []  # one per open <DL>: its folder's name, None for a root folder
        self._heading: list[str] | None = None  # the text of the <H3> being read
        self._heading_is_root = False
        self._next_folder: str | None = None  # the last <H3>'s name, waiting for its <DL>
        self._link: dict[str, str | None] | None = None  # the attributes of the <A> being read
        self._link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("a", "dt", "dl", "h3"):
            self.flush_link()  # a link left unclosed ends where the next entry begins
        if tag == "a":
            attributes = dict(attrs)
            if attributes.get("href") is not None:
                self._link = attributes
                self._link_text = []
        elif tag == "h3":
            self._heading = []
            self._heading_is_root = any(_flagged(attrs, flag) for flag in _ROOT_FOLDER_FLAGS)
        elif tag == "dl":
            self._folders.append(self._next_folder)
            self._next_folder = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self.flush_link()
        elif tag == "h3" and self._heading is not None:
            name = " ".join("".join(self._heading).split())
            self._next_folder = None if self._heading_is_root or name.casefold() in ROOT_FOLDERS else name or None
            self._heading = None
        elif tag == "dl":
            self.flush_link()
            if self._folders:
                self._folders.pop()

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link_text.append(data)
        elif self._heading is not None:
            self._heading.append(data)

    def flush_link(self) -> None:
        if self._link is None:
            return
        attributes, self._link = self._link, None
        self._ticker.tick()
        address = (attributes.get("href") or "").strip()
        title = " ".join("".join(self._link_text).split()) or None
        if not is_web_address(address):
            self._plan.refused.append(Refusal(preview(address, 200) or (title or "a bookmark"), "not a web address"))
            return
        folders = [name for name in self._folders if name]
        self._plan.items.append(
            ImportItem(
                source_type=SourceType.URL,
                content=address,
                source_ref=address,
                title=title,
                tags=unique([*folders, *split_tags(attributes.get("tags") or "", ",")]),
                captured_at=from_epoch(attributes.get("add_date") or ""),
            )
        )


def _flagged(attrs: list[tuple[str, str | None]], name: str) -> bool:
    return any(key == name and (value or "").strip().lower() == "true" for key, value in attrs)
