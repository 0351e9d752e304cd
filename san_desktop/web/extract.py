"""A fetched page's readable article and title, without navigation, footers, scripts or ads: trafilatura
(Apache-2.0, maintained) finds the main content and keeps its structure as markdown (headings, lists,
code blocks); when it finds nothing the whole page's text is used. Plain-text pages are kept as they are.

It runs in ``web.page_reader``'s child processes (the browser's pages and links' downloads alike), never in
the app's own: a page can be made to take minutes or gigabytes here, and the child is bounded in both.
"""

from __future__ import annotations

import html
import logging
import re

from san_desktop.core.errors import PermanentError
from san_desktop.core.text import decode_bytes, html_to_text
from san_desktop.web.fetch import Download

log = logging.getLogger(__name__)

MAX_TITLE_CHARACTERS = 300
_TITLE_TAG = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)


class NoReadableTextError(PermanentError):
    pass


def readable_page(page: Download) -> tuple[str, str]:
    """(title, text) of a downloaded page; the text starts with the title as a heading."""
    if page.content_type == "text/plain":
        text = _decode(page).strip()
        title = next((line.strip() for line in text.splitlines() if line.strip()), "")
    else:
        title, text = _article(page)
    title = " ".join(title.split())[:MAX_TITLE_CHARACTERS]
    text = unescape_markdown(text)
    if not text.strip():
        raise NoReadableTextError("The page has no readable text (it may need JavaScript to show anything).")
    first_line = text.lstrip().split("\n", 1)[0].lstrip("# ").strip()
    if title and first_line != title:
        text = f"# {title}\n\n{text.strip()}"
    return title, text.strip()


_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_CODE_SPAN = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)


def warm_up() -> None:
    """Load the extractor and what it loads on its first page (stop lists, patterns): about a fifth of
    a second of Python that would otherwise run beside the window when the first page arrives."""
    sample = "<p>" + "A checkpoint copies the write-ahead log back into the database file. " * 8 + "</p>"
    page = f"<html><head><title>Warm-up</title></head><body><article>{sample}</article></body></html>"
    readable_page(Download("https://example.invalid/", "text/html", "utf-8", page.encode()))


def _page_title(tree: object) -> str:
    """The page's title as trafilatura's metadata gives it (its meta tags, then JSON-LD, then title and h1)."""
    from trafilatura.metadata import examine_meta, extract_meta_json, extract_title

    metadata = examine_meta(tree)
    try:
        metadata = extract_meta_json(tree, metadata)
    except Exception:  # (trafilatura guards its JSON-LD reader the same way: its bugs must not lose the page)
        log.debug("JSON-LD metadata unreadable", exc_info=True)
    return html.unescape(metadata.title or extract_title(tree) or "")[:MAX_TITLE_CHARACTERS].strip()


def unescape_markdown(text: str) -> str:
    r"""The extractor escapes markdown's characters (``\_\_enter\_\_``): a scrap is read as text, so they go
    (code keeps whatever it holds)."""
    parts = _CODE_SPAN.split(text)
    return "".join(part if index % 2 else _ESCAPE.sub(r"\1", part) for index, part in enumerate(parts))


def _decode(page: Download) -> str:
    if page.charset:
        try:
            return page.body.decode(page.charset)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode_bytes(page.body, "the page")


def _article(page: Download) -> tuple[str, str]:
    import trafilatura  # (lxml and friends: loaded by the page reader's children only)
    from trafilatura.utils import load_html

    markup: str | bytes = page.body
    if page.charset:
        try:
            markup = page.body.decode(page.charset)
        except (LookupError, UnicodeDecodeError):
            markup = page.body  # trafilatura guesses the encoding
    tree = load_html(markup)
    # The title is read here, not by with_metadata=True: that also searches the whole page for a publication
    # date nothing uses, which took far longer than finding the article (GIL-holding regex work, beside
    # the window, for every page sent in a burst).
    title = _page_title(tree) if tree is not None else ""
    document = trafilatura.bare_extraction(
        tree if tree is not None else markup,
        url=page.url,
        include_formatting=True,
        include_comments=False,
        include_tables=True,
        output_format="python",
    )
    text = (getattr(document, "text", None) or "").strip()
    if not text or not title:
        whole = markup if isinstance(markup, str) else page.body.decode("utf-8", "replace")
        if not title:
            found = _TITLE_TAG.search(whole)
            title = html_to_text(found.group(1)) if found else ""
        if not text:
            log.info("No main content found in %s: keeping the whole page's text", page.url)
            text = html_to_text(whole)
    return title, text
