"""Where a TIL goes in the repository: readable names, Korean titles included, and suffixes on collision."""

from __future__ import annotations

from san_desktop.services.commits import render_path, slug


def test_a_korean_title_stays_readable() -> None:
    assert slug("리액트 훅과 SQLite WAL!", "2026-11-30") == "리액트-훅과-sqlite-wal"


def test_a_title_without_letters_falls_back_to_the_date() -> None:
    assert slug("!!! ??? ...", "2026-11-30") == "2026-11-30"


def test_the_template_gives_the_dated_path() -> None:
    assert (
        render_path("TIL/{yyyy}/{mm}/{dd}/{slug}.md", "2026-03-07", "Raft leaders") == "TIL/2026/03/07/raft-leaders.md"
    )


def test_a_title_that_would_name_a_windows_device_gets_an_underscore() -> None:
    assert slug("Con", "2026-11-30") == "con_"
    assert render_path("TIL/{date}/{slug}.md", "2026-11-30", "NUL") == "TIL/2026-11-30/nul_.md"
    assert slug("Console", "2026-11-30") == "console"
