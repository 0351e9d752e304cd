"""File names made from titles that Windows, macOS and Linux all store, and that Obsidian can link to.

Out go the characters Windows refuses (``<>:"/\\|?*``), control and format characters, the characters an
Obsidian wikilink cannot hold (``#^[]|``); the names Windows reserves for devices (``CON``, ``NUL``,
``COM1``…, with any extension: ``core.windows_names``) get an underscore; no name ends in a dot or a space
(Windows drops them) or starts with a dot (a hidden file). Names are NFC (macOS would otherwise store another
spelling) and cut to a length every file system takes, with room left for a `` (2)`` that keeps two equal
titles apart."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from san_desktop.core.windows_names import is_reserved_name

MAX_NAME_CHARS = 100  # characters of the name without its extension and suffix
MAX_NAME_BYTES = 200  # the same in UTF-8 (Hangul takes 3 bytes a character; 255 is the usual limit)
MAX_SUFFIX = 999
UNTITLED = "Untitled"

_SEPARATORS = str.maketrans(dict.fromkeys("/\\|", "-"))
_DROPPED = set('<>:"?*#^[]')


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn")


def _cut(name: str) -> str:
    name = name[:MAX_NAME_CHARS]
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1]
    return name


def safe_stem(title: str) -> str:
    """A file name (without extension) for ``title``: never empty, never a reserved name."""
    text = unicodedata.normalize("NFC", title).translate(_SEPARATORS)
    text = "".join(" " if char in _DROPPED or _is_control(char) else char for char in text)
    text = _cut(" ".join(text.split())).strip(". ")
    if not text:
        return UNTITLED
    if is_reserved_name(text):
        text = f"{text}_"
    return text


def numbered(stem: str) -> Iterator[str]:
    """``stem``, then ``stem (2)``, ``stem (3)``… up to ``MAX_SUFFIX``."""
    yield stem
    for number in range(2, MAX_SUFFIX + 1):
        yield f"{stem} ({number})"


def is_numbered(name: str, stem: str) -> bool:
    """Whether ``name`` is one of ``numbered(stem)``."""
    if name == stem:
        return True
    found = re.fullmatch(re.escape(stem) + r" \((\d+)\)", name)
    return found is not None and 2 <= int(found.group(1)) <= MAX_SUFFIX
