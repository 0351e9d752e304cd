"""A browser's bookmarks file, as Chrome exports it, read into URL items tagged with their folders."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from san_desktop.core.enums import SourceType
from san_desktop.transfer.items import ImportKind, ImportPlan
from san_desktop.transfer.readers import read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"


@pytest.fixture
def plan() -> ImportPlan:
    return read_plan(DATA / "chrome_bookmarks.html")


def test_each_web_link_is_one_url_item_with_its_title(plan: ImportPlan) -> None:
    assert plan.kind is ImportKind.BOOKMARKS
    assert [(item.content, item.title) for item in plan.items] == [
        ("https://sqlite.org/wal.html", "Write-Ahead Logging"),
        ("https://www.postgresql.org/docs/current/mvcc.html", "PostgreSQL: Concurrency Control & MVCC"),
        ("https://use-the-index-luke.com/", "Use The Index, Luke"),
        ("https://docs.python.org/3/library/html.parser.html", "html.parser — Simple HTML and XHTML parser"),
        (
            "https://ko.wikipedia.org/wiki/%EB%8D%B0%EC%9D%B4%ED%84%B0%EB%B2%A0%EC%9D%B4%EC%8A%A4",
            "데이터베이스 - 위키백과",
        ),
    ]
    assert all(item.source_type is SourceType.URL for item in plan.items)
    assert all(item.source_ref == item.content for item in plan.items)


def test_folders_become_tags_outermost_first_without_the_browsers_own_folders(plan: ImportPlan) -> None:
    assert [item.tags for item in plan.items] == [
        (),  # in the bookmarks bar
        ("Databases",),
        ("Databases", "Indexes"),
        (),  # in "Other bookmarks"
        ("읽을거리", "db", "wiki"),  # a folder, then the TAGS attribute
    ]


def test_add_date_is_the_capture_time(plan: ImportPlan) -> None:
    assert plan.items[0].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert plan.items[2].captured_at == datetime.fromtimestamp(1709590330, tz=UTC)


def test_a_bookmarklet_and_a_browser_page_are_refused_as_not_web_addresses(plan: ImportPlan) -> None:
    assert [refusal.reason for refusal in plan.refused] == ["not a web address", "not a web address"]
    assert plan.refused[0].source_ref.startswith("javascript:(function(){")
    assert plan.refused[1].source_ref == "chrome://settings/"


def test_a_toolbar_folder_in_another_language_is_left_out_by_its_flag(tmp_path: Path) -> None:
    path = tmp_path / "bookmarks.html"
    path.write_text(
        "\ufeff  <!doctype netscape-bookmark-file-1>\n<DL><p>\n"
        '<DT><H3 PERSONAL_TOOLBAR_FOLDER="true">북마크바</H3>\n<DL><p>\n'
        '<DT><H3>Rust</H3>\n<DL><p>\n<DT><A HREF="https://doc.rust-lang.org/book/" ADD_DATE="0">The Book\n'
        '<DT><A HREF="https://blog.rust-lang.org/">Blog</A>\n</DL><p>\n</DL><p>\n</DL><p>\n',
        encoding="utf-8",
    )
    plan = read_plan(path)
    assert [(item.content, item.title, item.tags, item.captured_at) for item in plan.items] == [
        ("https://doc.rust-lang.org/book/", "The Book", ("Rust",), None),  # an unclosed <A> ends at the next <DT>
        ("https://blog.rust-lang.org/", "Blog", ("Rust",), None),
    ]
