"""Text helpers for captured content: normalisation, hashing, decoding files, HTML to readable text."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser

from san_desktop.core.errors import SanError

DEFAULT_MAX_CAPTURE_BYTES = 1_000_000


class RejectedContentError(SanError):
    """Captured content that cannot become a scrap; the message says why."""


def normalize(text: str) -> str:
    """CRLF and CR to LF, trimmed (seed 001): the form that is hashed and stored."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def content_hash(normalized: str) -> str:
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


# Characters that show nothing: zero-width and joiners, BOM, soft hyphen, bidi marks, overrides and isolates.
_INVISIBLE = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0"
_INVISIBLE_OR_SPACE = re.compile(f"[\\s{_INVISIBLE}\\x00-\\x1f\\x7f-\\x9f]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def format_size(size: int, limit: int | None = None) -> str:
    """Bytes for people: ``1.5 MB``; with ``limit``, precise enough that the two never read the same."""
    for digits in range(1, 7):
        text = f"{size / 1_000_000:.{digits}f} MB"
        if limit is None or text != f"{limit / 1_000_000:.{digits}f} MB":
            return text
    return f"{size:,} bytes"


def check_capturable(text: str, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES) -> str:
    """The normalised text, or ``RejectedContentError`` with a reason a user understands."""
    if _SURROGATE.search(text):
        raise RejectedContentError("This is not valid text (it holds bytes that are not UTF-8); nothing was scrapped.")
    normalized = normalize(text)
    if not normalized:
        raise RejectedContentError("Nothing to scrap: the content is empty or only whitespace.")
    size = len(normalized.encode("utf-8"))
    if size > max_bytes:
        raise RejectedContentError(
            f"Too large to scrap: {format_size(size, max_bytes)}, the limit is {format_size(max_bytes, size)} "
            "(change capture.max_bytes in settings)."
        )
    if "\x00" in normalized:
        raise RejectedContentError("This looks like binary data, not text; nothing was scrapped.")
    if not _INVISIBLE_OR_SPACE.sub("", normalized):
        raise RejectedContentError("Nothing to scrap: the content has only invisible or control characters.")
    return normalized


# Terminal escape sequences: CSI (colours, cursor, clear screen), OSC (titles, OSC 52 clipboard writes,
# hyperlinks) and DCS/SOS/PM/APC strings, then any other two-character ESC sequence.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_UNSAFE_FOR_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def without_surrogates(text: str) -> str:
    """``text`` with its lone surrogates (what JSON's ``\\ud800`` or undecodable bytes leave: no database stores
    them) replaced by U+FFFD, for what is kept as given rather than refused: a title, a source's address."""
    return _SURROGATE.sub("\ufffd", text)


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences, control characters (but newline and tab) or bidi overrides,
    and with lone surrogates replaced: what may be printed to a terminal from user data."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    return without_surrogates(_UNSAFE_FOR_TERMINAL.sub("", text))


def decode_bytes(data: bytes, name: str = "the file") -> str:
    """Decode a text file (UTF-8, with or without BOM, or UTF-16 with BOM); binary data is rejected."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            text = ""
        if text and sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t") / len(text) >= 0.95:
            return text
    if b"\x00" in data[:8192]:
        raise RejectedContentError(f"{name} is a binary file, not text; nothing was scrapped.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp949")  # common for Korean text files saved on Windows
    except UnicodeDecodeError:
        text = ""
    if text and _looks_like_text(text):
        return text
    raise RejectedContentError(f"{name} is not valid UTF-8 (or another known text encoding); nothing was scrapped.")


def _looks_like_text(text: str) -> bool:
    """cp949 decodes much binary junk: accept it only when it reads as Korean or ASCII text."""
    readable = sum(1 for ch in text if (ch.isascii() and (ch.isprintable() or ch in "\n\r\t")) or "가" <= ch <= "힣")
    return readable / len(text) >= 0.95


_BLOCK_TAGS = {
    "p", "div", "br", "ul", "ol", "blockquote", "tr", "table", "section", "article", "header", "footer", "hr",
    "main", "aside", "figure", "figcaption", "dl", "dt", "dd", "details", "summary",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIP_TAGS = {"script", "style", "head", "noscript", "template", "svg", "nav"}


class _TextExtractor(HTMLParser):
    """Blocks kept apart as markdown would: headings as ``#`` lines, paragraphs separated by a blank
    line, list items as ``-`` lines, ``<pre>`` as fenced code kept verbatim (issue 16)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.preformatted: list[str] = []  # <pre> blocks, put back verbatim after whitespace clean-up
        self._skip = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
        elif tag == "pre":
            self._pre += 1
            self.parts.append("\n\n")
            self.preformatted.append("")
            self.parts.append(f"\x02{len(self.preformatted) - 1}\x02")
        elif tag in _HEADINGS:
            self.parts.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self.parts.append("\n\n")
        elif tag in _HEADINGS or (tag in _BLOCK_TAGS and tag != "br"):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            self.preformatted[-1] += data
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(markup: str) -> str:
    """Readable text from an HTML fragment or page (scripts, styles and navigation dropped), its blocks
    kept apart: headings, paragraphs, list items and code blocks."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    text = "".join(parser.parts)
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line not in ("#", "##", "###", "####", "#####", "######", "-")]
    collapsed = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    # a list's items stay together (no blank line between two "- " lines)
    collapsed = re.sub(r"(?m)^(- .*)\n\n(?=- )", r"\1\n", collapsed)

    def code(match: re.Match[str]) -> str:
        block = parser.preformatted[int(match.group(1))].strip("\n")
        return f"```\n{block}\n```" if block.strip() else ""

    return re.sub(r"\x02(\d+)\x02", code, collapsed).strip()


def preview(text: str, limit: int = 120) -> str:
    single = " ".join(text.split())
    return single if len(single) <= limit else single[: limit - 1] + "…"
