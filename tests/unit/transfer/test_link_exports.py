"""Pocket's classic HTML export and OPML outlines, read into URL items: each address once, the rest refused or
merged with a reason, impossible dates left out with a warning, and malformed or hostile files refused with a
sentence."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.transfer.items import ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers import detect_kind, read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"


@pytest.fixture
def pocket() -> ImportPlan:
    return read_plan(DATA / "pocket_export.html")


@pytest.fixture
def opml() -> ImportPlan:
    return read_plan(DATA / "feeds.opml")


def renamed(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "export.dat"  # the name says nothing
    path.write_bytes((DATA / name).read_bytes())
    return path


@pytest.mark.parametrize(("name", "kind"), [("pocket_export.html", ImportKind.POCKET), ("feeds.opml", ImportKind.OPML)])
def test_each_is_told_by_its_content(tmp_path: Path, name: str, kind: ImportKind) -> None:
    assert detect_kind(renamed(tmp_path, name)) is kind


def test_pocket_html_is_told_by_its_links_time_added_without_its_title(tmp_path: Path) -> None:
    path = tmp_path / "ril_export.html"
    path.write_text('<!DOCTYPE html><ul><li><a href="https://a.example/" time_added="1">A</a></li></ul>', "utf-8")
    assert detect_kind(path) is ImportKind.POCKET


def test_another_html_page_is_not_pocket(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text('<!DOCTYPE html><title>Recipes</title><a href="https://a.example/">A</a>', "utf-8")
    with pytest.raises(SanError, match="Not a file SAN Desktop can import"):
        detect_kind(path)


# Pocket


def test_pocket_html_gives_url_items_with_titles_in_order(pocket: ImportPlan) -> None:
    assert pocket.kind is ImportKind.POCKET
    assert [(item.source_ref, item.title) for item in pocket.items] == [
        ("https://sqlite.org/wal.html", "Write-Ahead Logging"),
        ("https://www.example.org/essays/slow-software?utm_source=pocket_mylist", None),  # Pocket wrote the address
        ("https://jvns.ca/blog/2023/08/03/behind--hello-world/", 'Behind "Hello World" on Linux'),
        ("https://use-the-index-luke.com/", "Use The Index, Luke"),  # from the Read Archive
    ]
    assert all(item.source_type is SourceType.URL and item.content == item.source_ref for item in pocket.items)
    assert all(item.identity is None for item in pocket.items)


def test_pocket_tags_come_from_the_tags_attribute_not_the_read_state(pocket: ImportPlan) -> None:
    assert [item.tags for item in pocket.items] == [
        ("databases", "sqlite", "later"),  # "later" from the same page listed again
        (),
        ("linux", "c"),
        ("databases",),
    ]


def test_pocket_time_added_is_the_capture_time(pocket: ImportPlan) -> None:
    assert pocket.items[0].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert pocket.items[3].captured_at == datetime(2021, 1, 1, tzinfo=UTC)
    assert pocket.items[0].warnings == ()


def test_a_pocket_date_in_the_year_2100_is_not_used_and_says_so(pocket: ImportPlan) -> None:
    item = pocket.items[2]
    assert item.captured_at is None
    assert len(item.warnings) == 1
    assert "4102444800" in item.warnings[0]


def test_the_same_page_listed_twice_comes_in_once(pocket: ImportPlan) -> None:
    assert pocket.merged == [
        Merge("https://sqlite.org/wal.html#overview", into="https://sqlite.org/wal.html", reason="listed twice")
    ]


def test_pocket_entries_without_a_web_address_are_refused_saying_why(pocket: ImportPlan) -> None:
    assert pocket.refused == [
        Refusal("A bookmarklet", "not a web address: javascript:void(0)"),
        Refusal("A link whose address was lost", "no address"),
    ]


def test_pocket_csv_is_still_read_as_csv(tmp_path: Path) -> None:
    plan = read_plan(DATA / "pocket.csv", ImportKind.POCKET)
    assert plan.items
    assert all(item.source_type is SourceType.URL for item in plan.items)


def test_pocket_html_forced_as_pocket_is_read_as_html(tmp_path: Path) -> None:
    plan = read_plan(renamed(tmp_path, "pocket_export.html"), ImportKind.POCKET)
    assert len(plan.items) == 4


# OPML


def test_opml_gives_one_url_item_per_outline_with_an_address(opml: ImportPlan) -> None:
    assert opml.kind is ImportKind.OPML
    assert [(item.source_ref, item.title) for item in opml.items] == [
        ("https://simonwillison.net/", "Simon Willison's Weblog"),
        ("https://jvns.ca/", "Julia Evans"),
        ("https://pythoninsider.blogspot.com/", "Python Insider"),
        ("https://lwn.net", "LWN.net"),
        ("https://news.ycombinator.com/rss", "Hacker News"),  # a feed without a page address: its feed
        ("https://peps.python.org/pep-0008/", "PEP 8 – Style Guide for Python Code"),  # an outliner's url
        ("https://aosabook.org/en/", "The Architecture of Open Source Applications"),
    ]
    assert all(item.source_type is SourceType.URL for item in opml.items)


def test_opml_folders_become_tags_outermost_first(opml: ImportPlan) -> None:
    assert [item.tags for item in opml.items] == [
        ("Programming",),
        ("Programming", "Favourites"),  # listed again in another folder
        ("Programming", "Python"),
        ("News",),
        ("News",),
        ("Reading list",),
        ("Reading list",),
    ]


def test_opml_created_is_the_capture_time_when_possible(opml: ImportPlan) -> None:
    assert opml.items[5].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert opml.items[0].captured_at is None
    assert opml.items[0].warnings == ()
    assert opml.items[6].captured_at is None
    assert len(opml.items[6].warnings) == 1
    assert "Fri, 01 Jan 2100 00:00:00 GMT" in opml.items[6].warnings[0]


def test_opml_merged_and_refused(opml: ImportPlan) -> None:
    assert opml.merged == [Merge("https://jvns.ca", into="https://jvns.ca/", reason="listed twice")]
    assert opml.refused == [
        Refusal("My laptop's feed", "not a web address: file:///home/jane/feed.xml"),
        Refusal("Ask Ana about B-trees", "no address"),
    ]


def opml_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "feeds.opml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_xml_bomb_is_refused_with_a_sentence_at_once(tmp_path: Path) -> None:
    lols = "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))
    path = opml_file(
        tmp_path,
        f'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY lol0 "lol">{lols}]>'
        '<opml version="2.0"><body><outline text="&lol9;" url="https://a.example/"/></body></opml>',
    )
    started = time.monotonic()
    with pytest.raises(SanError, match=r"feeds\.opml .*declares a document type or entities"):
        read_plan(path, ImportKind.OPML)
    assert time.monotonic() - started < 1


def test_an_external_entity_is_refused(tmp_path: Path) -> None:
    path = opml_file(
        tmp_path,
        '<!DOCTYPE opml SYSTEM "file:///etc/passwd"><opml><body><outline text="x" url="https://a.example/"/>'
        "</body></opml>",
    )
    with pytest.raises(SanError, match="declares a document type"):
        read_plan(path, ImportKind.OPML)


def test_broken_opml_names_the_file_and_where(tmp_path: Path) -> None:
    path = opml_file(tmp_path, '<opml version="2.0">\n<body>\n<outline text="a" url="https://a.example/">\n</body>')
    with pytest.raises(SanError, match=r"^feeds\.opml is not a readable OPML file: .* line 4"):
        read_plan(path)


def test_xml_that_is_not_opml_is_refused(tmp_path: Path) -> None:
    path = opml_file(tmp_path, '<rss version="2.0"><channel><title>x</title></channel></rss>')
    with pytest.raises(SanError, match=r"^feeds\.opml is not an OPML file: its root element is <rss>"):
        read_plan(path, ImportKind.OPML)


def test_opml_without_a_body_is_refused(tmp_path: Path) -> None:
    path = opml_file(tmp_path, '<opml version="2.0"><head><title>x</title></head></opml>')
    with pytest.raises(SanError, match="it has no <body>"):
        read_plan(path)


def test_deeply_nested_outlines_are_read_without_recursion(tmp_path: Path) -> None:
    depth = 5000
    path = opml_file(
        tmp_path,
        "<opml><body>"
        + '<outline text="f">' * depth
        + '<outline text="deep" url="https://deep.example/"/>'
        + "</outline>" * depth
        + "</body></opml>",
    )
    plan = read_plan(path)
    assert [item.source_ref for item in plan.items] == ["https://deep.example/"]
    assert plan.items[0].tags == ("f",)
