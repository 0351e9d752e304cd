"""Karakeep's, Linkwarden's and Omnivore's JSON exports, read as their own code writes them."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.transfer.items import ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers import detect_kind, read_plan

DATA = Path(__file__).parents[2] / "data" / "imports"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("karakeep_export.json", ImportKind.KARAKEEP),
        ("linkwarden_backup.json", ImportKind.LINKWARDEN),
        ("omnivore_metadata_0_to_20.json", ImportKind.OMNIVORE),
    ],
)
def test_each_is_told_by_its_keys(tmp_path: Path, name: str, kind: ImportKind) -> None:
    path = tmp_path / "export.dat"
    path.write_bytes((DATA / name).read_bytes())
    assert detect_kind(path) is kind


def test_json_of_another_app_is_not_importable(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark", "nested": {"bookmarks": []}}', encoding="utf-8")  # not at the top
    with pytest.raises(SanError, match="Not a file SAN Desktop can import"):
        detect_kind(path)


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        (ImportKind.KARAKEEP, "a Karakeep export"),
        (ImportKind.LINKWARDEN, "a Linkwarden backup"),
        (ImportKind.OMNIVORE, "an Omnivore export"),
    ],
)
def test_invalid_json_names_the_file_and_the_line(tmp_path: Path, kind: ImportKind, what: str) -> None:
    path = tmp_path / "export.json"
    path.write_text('{\n  "bookmarks": [\n    {"title": "a",}\n  ]\n}', encoding="utf-8")
    with pytest.raises(SanError, match=rf"^export\.json is not {what}: invalid JSON at line 3"):
        read_plan(path, kind)


@pytest.mark.parametrize(
    ("kind", "sentence"),
    [
        (ImportKind.KARAKEEP, 'not a Karakeep export: it has no list of "bookmarks"'),
        (ImportKind.LINKWARDEN, 'not a Linkwarden backup: it has no list of "collections"'),
        (ImportKind.OMNIVORE, "not an Omnivore export: it holds no list of saved items"),
    ],
)
def test_json_of_the_wrong_shape_says_what_is_missing(tmp_path: Path, kind: ImportKind, sentence: str) -> None:
    path = tmp_path / "export.json"
    path.write_text('{"something": "else"}', encoding="utf-8")
    with pytest.raises(SanError, match=sentence):
        read_plan(path, kind)


def test_json_nested_without_end_is_a_sentence_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text('{"bookmarks": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(SanError, match="nests more than 32 levels deep"):
        read_plan(path, ImportKind.KARAKEEP)


# Karakeep


@pytest.fixture
def karakeep() -> ImportPlan:
    return read_plan(DATA / "karakeep_export.json")


def test_karakeep_links_and_notes(karakeep: ImportPlan) -> None:
    assert karakeep.kind is ImportKind.KARAKEEP
    assert [(item.source_type, item.source_ref, item.title) for item in karakeep.items] == [
        (SourceType.URL, "https://sqlite.org/wal.html", "Write-Ahead Logging"),
        (
            SourceType.TEXT,
            "Run VACUUM after deleting most of a table; the file does not shrink on its own.",
            None,
        ),
        (SourceType.URL, "https://use-the-index-luke.com/", "Read the chapter on B-trees first"),  # its note
        (SourceType.URL, "https://jvns.ca/blog/2023/08/03/behind--hello-world/", 'Behind "Hello World" on Linux'),
        (SourceType.URL, "https://12factor.net/", "The Twelve-Factor App"),
    ]


def test_a_karakeep_note_keeps_its_own_note(karakeep: ImportPlan) -> None:
    text = karakeep.items[1]
    assert text.content == (
        "Run VACUUM after deleting most of a table; the file does not shrink on its own.\n\nNote: from the ops meeting"
    )
    assert text.identity is None  # Karakeep's export carries no id
    assert text.tags == ("ops",)


def test_a_karakeep_link_with_a_title_says_its_note_was_not_kept(karakeep: ImportPlan) -> None:
    assert karakeep.items[3].warnings == ("its note was not kept (a link keeps its title; the note stays in Karakeep)",)
    assert karakeep.items[0].warnings == ()


def test_karakeep_lists_with_their_parents_then_tags(karakeep: ImportPlan) -> None:
    assert karakeep.items[0].tags == ("Reading", "Databases", "databases", "sqlite", "wal")
    assert karakeep.items[2].tags == ("Reading",)


def test_karakeep_created_at_and_an_impossible_one(karakeep: ImportPlan) -> None:
    assert karakeep.items[0].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert karakeep.items[4].captured_at is None
    assert len(karakeep.items[4].warnings) == 1
    assert "-86400" in karakeep.items[4].warnings[0]


def test_karakeep_merged_and_refused(karakeep: ImportPlan) -> None:
    assert karakeep.merged == [
        Merge("https://sqlite.org/wal.html?utm_source=hackernews", into="https://sqlite.org/wal.html",
              reason="listed twice")
    ]  # fmt: skip
    assert karakeep.refused == [
        Refusal(
            "Whiteboard after the design review",
            "no address or text (Karakeep exports an image or PDF without its file)",
        ),
        Refusal("Release tarballs", "not a web address: ftp://ftp.example.org/pub/releases/"),
    ]


def test_a_karakeep_note_with_an_id_is_known_by_it(tmp_path: Path) -> None:
    path = tmp_path / "karakeep.json"
    bookmark = {"id": "abc123", "createdAt": 1709590272, "title": "Idea", "tags": [], "note": None,
                "content": {"type": "text", "text": "Index the tags column."}}  # fmt: skip
    path.write_text(json.dumps({"bookmarks": [bookmark]}), encoding="utf-8")
    [item] = read_plan(path).items
    assert item.identity == "karakeep:abc123"
    assert item.source_ref == "karakeep:abc123"


# Linkwarden


@pytest.fixture
def linkwarden() -> ImportPlan:
    return read_plan(DATA / "linkwarden_backup.json")


def test_linkwarden_links_with_their_collections_and_tags(linkwarden: ImportPlan) -> None:
    assert linkwarden.kind is ImportKind.LINKWARDEN
    assert [(item.source_ref, item.title, item.tags) for item in linkwarden.items] == [
        ("https://use-the-index-luke.com/", "A talk about how indexes really work", ("Reading",)),
        ("https://sqlite.org/wal.html", "Write-Ahead Logging",
         ("Reading", "Databases", "sqlite", "Unorganized", "later")),
        ("https://www.postgresql.org/docs/current/mvcc.html", "PostgreSQL: Concurrency Control",
         ("Reading", "Databases", "postgres")),
        ("https://www.nasa.gov/history/apollo-11/", "The first Moon landing", ("Unorganized",)),
    ]  # fmt: skip
    assert all(item.source_type is SourceType.URL for item in linkwarden.items)


def test_linkwarden_dates(linkwarden: ImportPlan) -> None:
    assert linkwarden.items[1].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert linkwarden.items[2].captured_at == datetime(2019, 5, 1, 8, tzinfo=UTC)  # its importDate
    assert linkwarden.items[3].captured_at is None
    assert len(linkwarden.items[3].warnings) == 1
    assert "1969-07-20T20:17:00.000Z" in linkwarden.items[3].warnings[0]


def test_linkwarden_merged_and_refused(linkwarden: ImportPlan) -> None:
    assert linkwarden.merged == [
        Merge("https://SQLite.org/wal.html/", into="https://sqlite.org/wal.html", reason="listed twice")
    ]
    assert linkwarden.refused == [Refusal("Scanned receipt", "no address")]
    assert linkwarden.items[2].warnings == (
        "its description was not kept (a link keeps its name; the description stays in Linkwarden)",
    )


# Omnivore


@pytest.fixture
def omnivore() -> ImportPlan:
    return read_plan(DATA / "omnivore_metadata_0_to_20.json")


def test_omnivore_items_with_labels_and_saved_at(omnivore: ImportPlan) -> None:
    assert omnivore.kind is ImportKind.OMNIVORE
    assert [(item.source_ref, item.title, item.tags) for item in omnivore.items] == [
        ("https://jvns.ca/blog/2023/08/03/behind--hello-world/", 'Behind "Hello World" on Linux',
         ("linux", "networking", "syscalls")),
        ("https://use-the-index-luke.com/", "Use The Index, Luke", ()),  # archived: no tag for it
        ("https://12factor.net/", "The Twelve-Factor App", ("architecture",)),
    ]  # fmt: skip
    assert omnivore.items[0].captured_at == datetime(2024, 3, 4, 22, 11, 12, tzinfo=UTC)
    assert omnivore.items[2].captured_at is None
    assert "2100-01-01T00:00:00.000Z" in omnivore.items[2].warnings[0]


def test_omnivore_merged_and_refused(omnivore: ImportPlan) -> None:
    assert omnivore.merged == [
        Merge("https://jvns.ca/blog/2023/08/03/behind--hello-world/#system-calls",
              into="https://jvns.ca/blog/2023/08/03/behind--hello-world/", reason="listed twice")
    ]  # fmt: skip
    assert omnivore.refused == [Refusal("scan-2024-03-07.pdf", "no address")]


def omnivore_zip(tmp_path: Path) -> Path:
    path = tmp_path / "omnivore-export.zip"
    metadata = (DATA / "omnivore_metadata_0_to_20.json").read_text(encoding="utf-8")
    later = json.dumps([{"id": "x", "slug": "pep-8", "title": "PEP 8", "url": "https://peps.python.org/pep-0008/",
                         "labels": ["python"], "savedAt": "2024-04-01T00:00:00.000Z"}])  # fmt: skip
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metadata_20_to_21.json", later)  # written out of order: read by its numbers
        archive.writestr("metadata_0_to_20.json", metadata)
        archive.writestr("content/use-the-index-luke-18e0f4b2d1c.html", "<p>…</p>")
        archive.writestr("highlights/behind-hello-world-on-linux-18e0f3a9c7b.md", "> a highlight")
    return path


def test_omnivores_zip_is_told_and_read_through_every_metadata_file(tmp_path: Path) -> None:
    path = omnivore_zip(tmp_path)
    assert detect_kind(path) is ImportKind.OMNIVORE
    plan = read_plan(path)
    assert [item.source_ref for item in plan.items] == [
        "https://jvns.ca/blog/2023/08/03/behind--hello-world/",
        "https://use-the-index-luke.com/",
        "https://12factor.net/",
        "https://peps.python.org/pep-0008/",
    ]
    assert len(plan.merged) == 1
    assert len(plan.refused) == 1


def test_a_broken_metadata_file_in_the_zip_is_named(tmp_path: Path) -> None:
    path = tmp_path / "omnivore-export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata_0_to_20.json", "[\n{")
    with pytest.raises(SanError, match=r"omnivore-export\.zip \(metadata_0_to_20\.json\) is not an Omnivore export: "
                       r"invalid JSON at line 2"):  # fmt: skip
        read_plan(path)
