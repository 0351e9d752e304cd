"""Kindle's My Clippings.txt in the languages Kindle ships: highlights with their notes, re-highlighting
collapsed, and every entry accounted for (an item, merged into one, or left out with why)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from san_desktop.core.enums import SourceType
from san_desktop.transfer.items import ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers import detect_kind, read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"
DDIA = "Designing Data-Intensive Applications (Martin Kleppmann)"
PRAGMATIC = "The Pragmatic Programmer (David Thomas;Andrew Hunt)"
DATA_KO = "데이터 중심 애플리케이션 설계 (마틴 클레프만)"
HABIT_KO = "작은 습관의 힘 (김서연)"
JA = "小さな習慣の力 (佐藤花子)"
DE = "Die Kunst des Lesens (Anna Schmidt)"
FR = "L'art de lire (Marie Dubois)"
ES = "El arte de leer (Lucía García)"


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


def test_every_entry_is_an_item_merged_or_refused_with_why() -> None:
    plan = read_plan(DATA / "kindle_clippings.txt")  # six entries: three items, two merged, a bookmark
    assert plan.merged == [
        Merge(f"{DDIA}, location 120-122", into=f"{DDIA}, location 120-126", reason="extended later"),
        Merge(f"{DDIA}, location 126", into=f"{DDIA}, location 120-126", reason="a note on that highlight"),
    ]
    assert plan.refused == [Refusal(f"{DDIA}, location 140", "a bookmark: no text")]
    assert len(plan.items) + len(plan.merged) + len(plan.refused) == 6


def test_highlights_are_known_by_book_and_location_start_across_imports() -> None:
    plan = read_plan(DATA / "kindle_clippings.txt")
    # the extended highlight keeps the first one's start: imported again, it updates the card; a note on no
    # highlight is told apart from a highlight starting where it is
    assert [item.identity for item in plan.items] == [f"{DDIA}|120", f"{DDIA}|note 400", f"{PRAGMATIC}|210"]
    assert all(item.warnings == () for item in plan.items)


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
    assert plan.merged == [
        Merge(
            "Book (A), location 12-14",
            into="Book (A), location 10-20",
            reason="a shorter highlight of the same passage",
        )
    ]


def test_a_note_in_another_book_at_the_same_place_is_not_attached(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Highlight on Location 10-20 | Added on Monday, March 4, 2024 10:11:12 PM\n\npassage",
        "Other (B)\n- Your Note on Location 15 | Added on Monday, March 4, 2024 10:12:12 PM\n\nthought",
    )
    plan = read_plan(path)
    assert [item.content for item in plan.items] == ["passage\n\n— Book (A)", "thought\n\n— Other (B)"]


def test_an_older_spanish_kindles_highlight_comes_in_with_its_time(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Libro (Autora)\n- La subrayado en la posición 5-6 | Añadido el lunes, 4 de marzo de 2024 22:11:12\n\nTexto",
    )
    assert detect_kind(path) is ImportKind.KINDLE
    (item,) = read_plan(path).items
    assert item.content == "Texto\n\n— Libro (Autora)"
    assert item.captured_at == datetime(2024, 3, 4, 22, 11, 12).astimezone()
    assert item.identity == "Libro (Autora)|5"
    assert item.warnings == ()


def test_a_line_in_a_language_not_known_here_comes_in_as_a_highlight_and_says_so(tmp_path: Path) -> None:
    path = clippings(tmp_path, "Bók (Höfundur)\n- Þú merktir á síðu 5 | Bætt við mánudagur 30 desember 2024\n\ntexti")
    (item,) = read_plan(path, kind=ImportKind.KINDLE).items
    assert item.content == "texti\n\n— Bók (Höfundur)"
    assert item.captured_at is None
    assert item.warnings == (
        "its date “Bætt við mánudagur 30 desember 2024” could not be read: it is dated by the import",
        "Kindle's line did not say, in a language known here, what it is: it came in as a highlight",
    )


def korean() -> ImportPlan:
    return read_plan(DATA / "kindle_clippings_ko.txt")


def test_a_korean_kindles_highlights_come_in_with_their_times_and_identity() -> None:
    plan = korean()
    assert plan.kind is ImportKind.KINDLE
    assert [(item.content, item.source_ref) for item in plan.items] == [
        (
            "로그는 추가만 가능한 레코드의 연속이다. 시간 순서로 완전히 정렬된다.\n\n"
            f"Note: SQLite의 WAL과 비교해 볼 것\n\n— {DATA_KO}",
            DATA_KO,
        ),
        (f"작게 시작해야 오래 간다.\n\n— {HABIT_KO}", HABIT_KO),
        (f"기록은 기억보다 정직하다.\n\n— {HABIT_KO}", HABIT_KO),
    ]
    assert [item.captured_at for item in plan.items] == [
        datetime(2024, 3, 4, 22, 13, 40).astimezone(),  # 오후 10:13:40
        datetime(2024, 3, 5, 8, 1, 2).astimezone(),  # 오전 8:01:02
        None,  # "2024년 13월": no such month
    ]
    # a highlight on a page without locations has no identity: a page holds many, its text tells them apart
    assert [item.identity for item in plan.items] == [f"{DATA_KO}|1201", None, f"{HABIT_KO}|170"]


def test_a_korean_note_goes_with_its_highlight_and_the_rest_is_accounted_for() -> None:
    plan = korean()  # seven entries
    assert plan.merged == [
        Merge(f"{DATA_KO}, location 1201-1203", into=f"{DATA_KO}, location 1201-1208", reason="extended later"),
        Merge(f"{DATA_KO}, location 1208", into=f"{DATA_KO}, location 1201-1208", reason="a note on that highlight"),
    ]
    assert plan.refused == [
        Refusal(f"{DATA_KO}, location 1240", "a bookmark: no text"),
        Refusal(f"{HABIT_KO}, location 180-181", "an empty highlight: Kindle kept no text"),
    ]


def test_a_date_that_cannot_be_read_is_a_warning_on_the_item() -> None:
    assert [item.warnings for item in korean().items] == [
        (),
        (),
        ("its date “2024년 13월 5일 화요일 오전 8:05:00” could not be read: it is dated by the import",),
    ]


def multilingual() -> ImportPlan:
    return read_plan(DATA / "kindle_clippings_multi.txt")


def test_japanese_german_french_and_spanish_highlights_keep_their_notes_and_times() -> None:
    plan = multilingual()
    assert [item.content for item in plan.items] == [
        f"習慣は小さく始めるほど長く続く。\n\nNote: 毎朝試すこと\n\n— {JA}",
        f"Wer langsam liest, liest zweimal.\n\nNote: stimmt das?\n\n— {DE}",
        f"Lire, c'est relire.\n\nNote: à retenir\n\n— {FR}",
        f"Leer es conversar con los ausentes.\n\nNote: pensar en esto\n\n— {ES}",
    ]
    assert [item.source_ref for item in plan.items] == [JA, DE, FR, ES]
    assert {item.captured_at for item in plan.items} == {datetime(2024, 3, 4, 22, 11, 12).astimezone()}
    assert [item.identity for item in plan.items] == [f"{JA}|123", f"{DE}|310", f"{FR}|123", f"{ES}|123"]
    assert all(item.warnings == () for item in plan.items)


def test_notes_and_bookmarks_in_four_languages_are_merged_and_refused_by_name() -> None:
    plan = multilingual()  # twelve entries, separated by lines of 10, 30 and 12 '='
    assert plan.merged == [
        Merge(f"{book}, location {note}", into=f"{book}, location {highlight}", reason="a note on that highlight")
        for book, note, highlight in (
            (JA, 125, "123-125"),
            (DE, 312, "310-312"),
            (FR, 125, "123-125"),
            (ES, 125, "123-125"),
        )
    ]
    assert plan.refused == [
        Refusal(f"{book}, location {where}", "a bookmark: no text")
        for book, where in ((JA, 200), (DE, 400), (FR, 140), (ES, 140))
    ]


def test_a_separator_of_any_length_from_ten_separates_entries(tmp_path: Path) -> None:
    path = tmp_path / "My Clippings.txt"
    path.write_text(
        "Book (A)\n- Your Highlight on Location 10-12 | Added on Monday, March 4, 2024 10:11:12 PM\n\nfirst\n"
        + "=" * 30
        + "\nOther (B)\n- Your Highlight on Location 10-12 | Added on Monday, March 4, 2024 10:12:12 PM\n\nsecond\n"
        + "=" * 9  # too short: text
        + "\n"
        + "=" * 10
        + "\n",
        encoding="utf-8",
    )
    plan = read_plan(path)
    assert [item.content for item in plan.items] == [
        "first\n\n— Book (A)",
        "second\n=========\n\n— Other (B)",
    ]


def test_entries_that_would_share_a_name_also_say_what_they_are(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Note on Location 40 | Added on Monday, March 4, 2024 10:11:12 PM\n\nalone",
        "Book (A)\n- Your Bookmark on Location 40 | Added on Monday, March 4, 2024 10:12:12 PM\n\n",
        "Book (A)\n- Your Bookmark on Location 40 | Added on Monday, March 4, 2024 10:13:12 PM\n\n",
    )
    plan = read_plan(path)
    assert [item.identity for item in plan.items] == ["Book (A)|note 40"]
    assert plan.refused == [
        Refusal("Book (A), location 40 (bookmark) (entry 2)", "a bookmark: no text"),
        Refusal("Book (A), location 40 (bookmark) (entry 3)", "a bookmark: no text"),
    ]


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
        ("Book (A), location 10-20", "Kindle kept no text: the book's clipping limit was reached")
    ]


def test_a_note_on_a_highlight_too_large_to_keep_is_left_out_with_it(tmp_path: Path) -> None:
    path = clippings(
        tmp_path,
        "Book (A)\n- Your Highlight on Location 10-20\n\n" + "long passage " * 20,
        "Book (A)\n- Your Note on Location 20\n\nthought",
    )
    plan = read_plan(path, max_bytes=100)
    assert plan.items == []
    assert plan.merged == []
    assert [refusal.source_ref for refusal in plan.refused] == ["Book (A), location 10-20", "Book (A), location 20"]
    assert plan.refused[1].reason == "part of Book (A), location 10-20, which was left out"
