"""Pocket's and Readwise's CSV exports read into items."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from san_desktop.core.enums import SourceType
from san_desktop.transfer.items import ImportKind, Refusal
from san_desktop.transfer.readers import read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"
DDIA = "Designing Data-Intensive Applications"


def test_pocket_rows_become_url_items_with_tags_and_times() -> None:
    plan = read_plan(DATA / "pocket.csv")
    assert plan.kind is ImportKind.POCKET
    assert [(item.content, item.title, item.tags) for item in plan.items] == [
        ("https://sqlite.org/wal.html", "Write-Ahead Logging", ("databases", "sqlite")),
        ("https://example.com/notes?id=1", 'Notes on "distributed" systems, part 1', ()),
        ("https://example.org/untitled", None, ("reading",)),  # Pocket's title was the address itself
    ]
    assert all(item.source_type is SourceType.URL for item in plan.items)
    assert plan.items[0].source_ref == "https://sqlite.org/wal.html"
    assert plan.items[0].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert plan.refused == [Refusal("not a url", "not a web address")]


def test_readwise_export_gives_a_text_item_per_highlight_with_its_note_and_book() -> None:
    plan = read_plan(DATA / "readwise_export.csv")
    assert plan.kind is ImportKind.READWISE
    first, _korean = plan.items
    assert first.source_type is SourceType.TEXT
    assert first.content == (
        "A database is a log of changes, and the tables are a cache of it.\n\n"
        f"Note: the log is the truth\n\n— {DDIA}, Martin Kleppmann"
    )
    assert first.title is None
    assert first.source_ref == f"{DDIA} — Martin Kleppmann"
    assert first.tags == ("databases", "logs", "favorite")
    assert first.captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)


def test_a_korean_highlight_stays_intact() -> None:
    korean = read_plan(DATA / "readwise_export.csv").items[1]
    assert korean.content == "데이터는 흐르고, 색인은 남는다.\n\n— 데이터 중심 애플리케이션 설계, 마틴 클레프만"
    assert korean.source_ref == "데이터 중심 애플리케이션 설계 — 마틴 클레프만"
    assert korean.tags == ()
    assert korean.captured_at == datetime(2024, 3, 5, 9, tzinfo=timezone(timedelta(hours=9)))


def test_an_empty_highlight_is_refused() -> None:
    plan = read_plan(DATA / "readwise_export.csv")
    assert plan.refused == [Refusal(f"{DDIA} — Martin Kleppmann", "an empty highlight")]


def test_readwise_short_header_uses_the_url_as_source_and_tolerates_a_bad_date() -> None:
    plan = read_plan(DATA / "readwise_short.csv")
    assert plan.kind is ImportKind.READWISE
    with_url, without_url = plan.items
    assert with_url.source_ref == "https://sqlite.org/wal.html"
    assert with_url.content == (
        "Readers do not block writers, and a writer does not block readers.\n\n— Write-Ahead Logging, SQLite"
    )
    assert with_url.captured_at == datetime(2024, 3, 4).astimezone()  # a date alone: local midnight
    assert without_url.source_ref == "Write-Ahead Logging"
    assert without_url.content.endswith("\n\n— Write-Ahead Logging")
    assert without_url.captured_at is None  # "sometime last spring"
    assert plan.refused == []


def test_readwise_columns_are_matched_whatever_their_case(tmp_path: Path) -> None:
    path = tmp_path / "highlights.csv"
    path.write_text(
        "HIGHLIGHT,book title,Book Author,highlighted AT\r\n"
        '"Line one\r\nline two",Book,Someone,"March 4, 2024 10:11 PM"\r\n',
        encoding="utf-8",
    )
    (item,) = read_plan(path).items
    assert item.content == "Line one\nline two\n\n— Book, Someone"
    assert item.captured_at == datetime(2024, 3, 4, 22, 11).astimezone()
