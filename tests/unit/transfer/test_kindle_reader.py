"""Kindle's My Clippings.txt: highlights with their notes, re-highlighting collapsed, bookmarks passed over."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from san_desktop.core.enums import SourceType
from san_desktop.transfer.items import ImportKind
from san_desktop.transfer.readers import detect_kind, read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"
DDIA = "Designing Data-Intensive Applications (Martin Kleppmann)"
PRAGMATIC = "The Pragmatic Programmer (David Thomas;Andrew Hunt)"


def clippings(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "My Clippings.txt"
    path.write_text("".join(f"{entry}\n==========\n" for entry in entries), encoding="utf-8")
    return path


def test_the_clippings_of_two_books_become_one_item_per_passage() -> None:
    plan = read_plan(DATA / "kindle_clippings.txt")
    assert plan.kind is ImportKind.KINDLE
    assert [item.content for item in plan.items] == [
        "A log is an append-only sequence of records. It is totally ordered by time.\n\n"
        f"Note: compare with the WAL in SQLite\n\n— {DDIA}",
        f"ask about leaderless replication\n\n— {DDIA}",
        f"Don't live with broken windows.\n\n— {PRAGMATIC}",
    ]
    assert [item.source_ref for item in plan.items] == [DDIA, DDIA, PRAGMATIC]  # the BOMs before titles gone
    assert all(item.source_type is SourceType.TEXT and item.title is None for item in plan.items)
    assert plan.refused == []


def test_added_on_is_the_capture_time_in_local_time() -> None:
    plan = read_plan(DATA / "kindle_clippings.txt")
    assert [item.captured_at for item in plan.items] == [
        datetime(2024, 3, 4, 22, 13, 40).astimezone(),  # the extended highlight's time, not the first one's
        datetime(2024, 3, 4, 22, 20).astimezone(),
        datetime(2024, 3, 5, 8, 1, 2).astimezone(),
    ]


def test_without_times_the_longer_of_overlapping_highlights_is_kept(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Highlight on Location 10-20\n\nthe whole longer passage",
        "Book (A)\n- Your Highlight on Location 12-14\n\nshorter",
        "Other (B)\n- Your Highlight on Location 12-14\n\nanother book, same place",
    )
    plan = read_plan(path, kind=ImportKind.KINDLE)
    assert [item.content.split("\n\n")[0] for item in plan.items] == [
        "the whole longer passage",
        "another book, same place",
    ]


def test_a_note_in_another_book_at_the_same_place_is_not_attached(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Highlight on Location 10-20 | Added on Monday, March 4, 2024 10:11:12 PM\n\npassage",
        "Other (B)\n- Your Note on Location 15 | Added on Monday, March 4, 2024 10:12:12 PM\n\nthought",
    )
    plan = read_plan(path)
    assert [item.content for item in plan.items] == ["passage\n\n— Book (A)", "thought\n\n— Other (B)"]


def test_entries_in_another_language_come_in_without_a_time(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Libro (Autora)\n- La subrayado en la posición 5-6 | Añadido el lunes, 4 de marzo de 2024 22:11:12\n\nTexto",
    )
    assert detect_kind(path) is ImportKind.KINDLE
    (item,) = read_plan(path).items
    assert item.content == "Texto\n\n— Libro (Autora)"
    assert item.captured_at is None


def test_the_first_kindles_short_location_ranges_are_read(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Highlight Loc. 998-1003 | Added on Tuesday, February 09, 2010, 10:45 PM\n\nfirst",
        "Book (A)\n- Highlight Loc. 998-12 | Added on Tuesday, February 09, 2010, 10:46 PM\n\nfirst, extended",
    )
    (item,) = read_plan(path).items
    assert item.content == "first, extended\n\n— Book (A)"
    assert item.captured_at == datetime(2010, 2, 9, 22, 46).astimezone()


def test_a_passage_past_the_clipping_limit_is_refused_with_why(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Highlight on Location 10-20\n\n <You have reached the clipping limit for this item>",
    )
    plan = read_plan(path)
    assert plan.items == []
    assert [(refusal.source_ref, refusal.reason) for refusal in plan.refused] == [
        ("Book (A)", "Kindle kept no text: the book's clipping limit was reached")
    ]
