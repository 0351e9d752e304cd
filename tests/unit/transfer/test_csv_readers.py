"""Pocket's and Readwise's CSV exports read into items, and damaged ones read row by row."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.transfer.items import ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers import detect_kind, read_plan
from san_desktop.transfer.readers._common import from_epoch, parse_english_date, parse_iso

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


# --- damaged files: what cannot be read is left out row by row, with its line and why ----------------------


def pocket_damaged() -> ImportPlan:
    # told by its content: a stray NUL does not make a damaged export binary (issue 40: it was refused unnamed)
    assert detect_kind(DATA / "csv_pocket_damaged.csv") is ImportKind.POCKET
    return read_plan(DATA / "csv_pocket_damaged.csv")


def test_a_damaged_pocket_export_keeps_every_row_it_can_read() -> None:
    plan = pocket_damaged()  # seven rows: five items, two left out
    assert [(item.content, item.title) for item in plan.items] == [
        ("https://sqlite.org/wal.html", "Write-Ahead Logging"),
        ("https://example.com/future", "Far future"),
        ("https://example.com/notes?id=1", 'Notes on "distributed" systems, part 1'),  # after the broken row
        ("https://example.com/old", "Before the epoch"),
        ("https://sqlite.org/atomiccommit.html", "Atomic Commit"),
    ]
    assert plan.merged == []


def test_a_pocket_row_with_a_nul_or_an_unclosed_quote_is_left_out_by_its_line() -> None:
    assert pocket_damaged().refused == [
        Refusal("line 3", "line 3 holds a NUL character"),
        Refusal("line 5", "a quote that is never closed, or closed in the middle of a value"),
    ]


def test_an_impossible_pocket_time_is_a_warning_not_a_date() -> None:
    plan = pocket_damaged()
    assert [item.captured_at for item in plan.items] == [
        datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC),
        None,  # 99999999999999999999: the year 5138
        datetime(2024, 3, 4, 22, 11, 40, tzinfo=UTC),
        None,  # -86400: 1969
        datetime(2024, 3, 4, 22, 11, 50, tzinfo=UTC),
    ]
    assert [item.warnings for item in plan.items] == [
        (),
        ("its date “99999999999999999999” (the year 5138) cannot be right: it is dated by the import",),
        (),
        ("its date “-86400” (the year 1969) cannot be right: it is dated by the import",),
        (),
    ]


def test_a_quote_never_closed_takes_only_its_own_row(tmp_path: Path) -> None:
    path = tmp_path / "pocket.csv"
    path.write_text(
        "title,url,time_added,tags,status\n"
        "A,https://a.example/,1709590272,,unread\n"
        '"B,https://b.example/,1709590280,,unread\n'
        "C,https://c.example/,1709590290,,unread\n",
        encoding="utf-8",
    )
    plan = read_plan(path)
    assert [item.content for item in plan.items] == ["https://a.example/", "https://c.example/"]
    assert plan.refused == [Refusal("line 3", "a quote that is never closed")]


def test_a_quote_that_runs_on_into_the_next_row_is_caught_by_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "highlights.csv"
    path.write_text(
        "Highlight,Title,Author,URL,Note,Location,Date\n"
        '"first,T,A,,,3,2024-03-04\n'
        '",T,A,,,5,2024-03-04,one column too many\n'
        "third,T,A,,,7,2024-03-04\n",
        encoding="utf-8",
    )
    plan = read_plan(path)
    assert [item.content for item in plan.items] == ["third\n\n— T, A"]
    assert plan.refused == [
        Refusal("line 2", "a quote that is never closed"),
        Refusal("line 3", "a quote that is never closed"),
    ]


def test_a_file_that_is_not_the_csv_expected_is_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text("Just some notes\nabout nothing in particular\n", encoding="utf-8")
    with pytest.raises(SanError, match="is not a Pocket CSV export: its first line names no “url” column"):
        read_plan(path, ImportKind.POCKET)
    with pytest.raises(SanError, match="is not a Readwise CSV export: its first line names no “highlight”"):
        read_plan(path, ImportKind.READWISE)


def test_a_binary_file_named_as_csv_is_still_refused_as_binary(tmp_path: Path) -> None:
    path = tmp_path / "pocket.csv"
    path.write_bytes(b"title,url\n" + b"\x00\x01\x02\x00" * 100)
    with pytest.raises(SanError, match="binary file"):
        read_plan(path, ImportKind.POCKET)


def readwise_damaged() -> ImportPlan:
    return read_plan(DATA / "csv_readwise_damaged.csv", ImportKind.READWISE)


def test_a_damaged_readwise_export_keeps_every_highlight_it_can_read() -> None:
    plan = readwise_damaged()  # eight rows: three items, one note merged, three left out
    assert [item.content for item in plan.items] == [
        "A database is a log of changes, and the tables are a cache of it.\n\n"
        f"Note: the log is the truth\n\n— {DDIA}, Martin Kleppmann",
        f"Partitioning splits a large dataset\ninto smaller ones.\n\n— {DDIA}, Martin Kleppmann",
        f"Transactions simplify the programming model.\n\n— {DDIA}, Martin Kleppmann",
    ]
    assert {item.source_ref for item in plan.items} == {f"{DDIA} — Martin Kleppmann"}
    assert plan.refused == [
        Refusal("line 4", "line 4 holds a NUL character"),
        Refusal("line 5", "a quote that is never closed, or closed in the middle of a value"),
        Refusal("line 9", "a note alone: no one highlight of its book is at its place"),
    ]


def test_a_readwise_note_row_is_merged_into_the_highlight_at_its_place() -> None:
    assert readwise_damaged().merged == [
        Merge("line 3", into=f"{DDIA} — Martin Kleppmann, location 1204", reason="a note on that highlight")
    ]


def test_impossible_readwise_dates_are_warnings_not_dates() -> None:
    plan = readwise_damaged()
    assert [item.captured_at for item in plan.items] == [datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC), None, None]
    assert [item.warnings for item in plan.items] == [
        (),
        ("its date “5138-01-01 00:00:00+00:00” (the year 5138) cannot be right: it is dated by the import",),
        ("its date “1900-01-01 00:00:00+00:00” (the year 1900) cannot be right: it is dated by the import",),
    ]


def test_readwise_highlights_are_known_by_title_and_location_across_imports() -> None:
    assert [item.identity for item in readwise_damaged().items] == [f"{DDIA}|1204", f"{DDIA}|1500", f"{DDIA}|1600"]
    assert [item.identity for item in read_plan(DATA / "readwise_short.csv").items] == [
        "Write-Ahead Logging|3",
        "Write-Ahead Logging|5",
    ]


def test_a_readwise_highlight_id_is_its_identity_and_a_shared_page_is_none(tmp_path: Path) -> None:
    path = tmp_path / "highlights.csv"
    path.write_text(
        "Highlight ID,Highlight,Book Title,Location Type,Location\n"
        "101,first,Book,page,3\n"
        ",second,Book,page,3\n"
        ",third,Book,page,3\n",
        encoding="utf-8",
    )
    # two highlights on page 3 without ids: neither can be told from the other but by its text
    assert [item.identity for item in read_plan(path).items] == ["101", None, None]


def test_an_unreadable_readwise_date_is_a_warning() -> None:
    _, without_url = read_plan(DATA / "readwise_short.csv").items
    assert without_url.warnings == ("its date “sometime last spring” could not be read: it is dated by the import",)


@pytest.mark.parametrize(
    "read",
    [
        lambda: from_epoch("99999999999999999999"),
        lambda: parse_iso("5138-01-01T00:00:00+00:00"),
        lambda: parse_iso("1969-12-31T23:59:59+00:00"),
        lambda: parse_english_date("March 4, 1903 10:11 PM"),
    ],
    ids=["epoch in 5138", "iso in 5138", "iso in 1969", "english in 1903"],
)
def test_no_reader_can_get_an_impossible_time(read: Callable[[], datetime | None]) -> None:
    assert read() is None
