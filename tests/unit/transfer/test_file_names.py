"""File names from titles that Windows, macOS and Linux all store and Obsidian links to."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from san_desktop.transfer.file_names import MAX_NAME_BYTES, is_numbered, numbered, safe_stem

_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"{d}{n}" for d in ("COM", "LPT") for n in range(10)}


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        ("Raft: who leads?", "Raft who leads"),
        ("TCP/IP and a\\b | c", "TCP-IP and a-b - c"),
        ('<script>"x"*', "script x"),
        ("CON", "CON_"),
        ("nul.txt", "nul.txt_"),
        ("com1", "com1_"),
        ("CONSOLE", "CONSOLE"),
        ("ends with dots...", "ends with dots"),
        (".hidden", "hidden"),
        ("tab\tand\nnewline\x00", "tab and newline"),
        ("Heading #1 [draft] ^ref", "Heading 1 draft ref"),
        ("???", "Untitled"),
        ("", "Untitled"),
        ("트랜잭션 격리 수준", "트랜잭션 격리 수준"),
    ],
)
def test_titles_become_safe_names(title: str, stem: str) -> None:
    assert safe_stem(title) == stem


def test_a_long_korean_title_is_cut_to_a_name_every_file_system_takes() -> None:
    stem = safe_stem("가" * 500)
    assert len(f"{stem} (999).md".encode()) <= 255
    assert len(stem.encode()) <= MAX_NAME_BYTES


def test_a_decomposed_title_is_stored_composed() -> None:
    assert safe_stem(unicodedata.normalize("NFD", "한글 Café")) == "한글 Café"


@given(st.text(max_size=300))
def test_any_title_gives_a_name_windows_can_store(title: str) -> None:
    stem = safe_stem(title)
    assert stem
    assert not set(stem) & set('<>:"/\\|?*#^[]')
    assert all(ord(char) >= 32 for char in stem)
    assert stem == stem.strip(". ")
    assert stem.split(".")[0].rstrip(" ").upper() not in _WINDOWS_RESERVED
    assert len(stem.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES


def test_numbered_names_follow_the_stem() -> None:
    names = list(numbered("Raft"))
    assert names[:3] == ["Raft", "Raft (2)", "Raft (3)"]
    assert all(is_numbered(name, "Raft") for name in names)
    assert not is_numbered("Raft (1)", "Raft")
    assert not is_numbered("Raft (2) copy", "Raft")
    assert not is_numbered("Rafts", "Raft")
