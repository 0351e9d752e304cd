"""Telling sources apart by content, refusing what is not one, and cancelling a long read."""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from san_desktop.core.errors import SanError
from san_desktop.transfer.items import ImportKind
from san_desktop.transfer.readers import ImportCancelled, detect_kind, read_plan
from san_desktop.transfer.readers import _common as common
from tests.support.backups import with_many_members

DATA = Path(__file__).parents[2] / "data" / "imports"
EXPECTED = (
    "Not a file SAN Desktop can import: expected a folder of Markdown notes, a bookmarks .html file, a Pocket or "
    "Readwise .csv, Kindle's My Clippings.txt or a SAN backup .zip"
)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("chrome_bookmarks.html", ImportKind.BOOKMARKS),
        ("pocket.csv", ImportKind.POCKET),
        ("readwise_export.csv", ImportKind.READWISE),
        ("readwise_short.csv", ImportKind.READWISE),
        ("kindle_clippings.txt", ImportKind.KINDLE),
        ("pocket_export.html", ImportKind.POCKET),
        ("feeds.opml", ImportKind.OPML),
        ("karakeep_export.json", ImportKind.KARAKEEP),
        ("linkwarden_backup.json", ImportKind.LINKWARDEN),
        ("omnivore_metadata_0_to_20.json", ImportKind.OMNIVORE),
    ],
)
def test_each_source_is_told_by_its_content(tmp_path: Path, name: str, kind: ImportKind) -> None:
    renamed = tmp_path / "export.dat"  # the name says nothing
    renamed.write_bytes((DATA / name).read_bytes())
    assert detect_kind(renamed) is kind


def test_a_folder_is_a_markdown_source(tmp_path: Path) -> None:
    assert detect_kind(tmp_path) is ImportKind.MARKDOWN


def backup(tmp_path: Path, manifest: object) -> Path:
    path = tmp_path / "san-backup.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        archive.writestr("scraps.jsonl", "")
    return path


def test_a_zip_with_the_backup_manifest_is_a_backup_restored_rather_than_read(tmp_path: Path) -> None:
    path = backup(tmp_path, {"format": "san-desktop-backup", "version": 1})
    assert detect_kind(path) is ImportKind.BACKUP
    with pytest.raises(SanError, match="backup is restored whole"):
        read_plan(path)


def test_another_zip_is_not_importable(tmp_path: Path) -> None:
    path = backup(tmp_path, {"format": "something-else"})
    with pytest.raises(SanError, match="zip file without a SAN Desktop manifest") as raised:
        detect_kind(path)
    assert str(raised.value).startswith(EXPECTED)


def test_telling_a_zip_apart_reads_its_list_of_members_within_the_restores_bound(tmp_path: Path) -> None:
    """A small zip can list hundreds of thousands of members; ``zipfile`` would make an object of each before the
    manifest is looked at. What kind of zip it is is told within the restore's bounds."""
    many = with_many_members(
        backup(tmp_path, {"format": "san-desktop-backup", "version": 1}), tmp_path / "m.zip", 300_000
    )
    tracemalloc.start()
    try:
        with pytest.raises(SanError, match="more than 100,000 members"):
            detect_kind(many)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 * 1024 * 1024  # the list of members is read whole, but no object is made of each


def test_a_random_text_file_names_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "shopping.txt"
    path.write_text("milk\neggs\n", encoding="utf-8")
    with pytest.raises(SanError) as raised:
        read_plan(path)
    assert str(raised.value).startswith(EXPECTED)


def test_a_picture_names_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "diagram.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    with pytest.raises(SanError) as raised:
        detect_kind(path)
    assert str(raised.value).startswith(EXPECTED)


def test_a_missing_path_says_so(tmp_path: Path) -> None:
    with pytest.raises(SanError, match="no such file or folder"):
        read_plan(tmp_path / "gone.csv")


def test_a_file_read_as_a_folder_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SanError, match="not a folder"):
        read_plan(DATA / "pocket.csv", ImportKind.MARKDOWN)


def test_cancelling_after_the_first_progress_stops_the_read(tmp_path: Path) -> None:
    for number in range(3):
        (tmp_path / f"note-{number}.md").write_text(f"note {number}", encoding="utf-8")
    reported: list[int] = []
    with pytest.raises(ImportCancelled, match="cancelled"):
        read_plan(tmp_path, cancelled=lambda: bool(reported), progress=reported.append)
    assert reported == [0]


def pocket_rows(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "pocket.csv"
    rows = "".join(f"Page {n},https://example.com/{n},1709590272,,unread\n" for n in range(count))
    path.write_text("title,url,time_added,tags,status\n" + rows, encoding="utf-8")
    return path


def test_progress_is_reported_every_hundred_entries_and_at_the_end(tmp_path: Path) -> None:
    reported: list[int] = []
    plan = read_plan(pocket_rows(tmp_path, 250), progress=reported.append)
    assert len(plan.items) == 250
    assert reported == [0, 100, 200, 250]


def test_cancelling_midway_stops_at_the_next_entry(tmp_path: Path) -> None:
    reported: list[int] = []
    with pytest.raises(ImportCancelled):
        read_plan(pocket_rows(tmp_path, 250), cancelled=lambda: 100 in reported, progress=reported.append)
    assert reported == [0, 100]


SINGLE_FILE_KINDS = [kind for kind in ImportKind if kind not in (ImportKind.MARKDOWN, ImportKind.BACKUP)]


@pytest.mark.parametrize("kind", SINGLE_FILE_KINDS, ids=str)
def test_a_pipe_named_as_any_kind_of_file_is_refused_without_being_opened(tmp_path: Path, kind: ImportKind) -> None:
    """Opened to be read, a pipe without a writer would hang the import (Omnivore's zip check opened it)."""
    pipe = tmp_path / "export.json"
    os.mkfifo(pipe)
    with pytest.raises(SanError, match="not a regular file"):
        read_plan(pipe, kind)


@pytest.mark.parametrize("kind", SINGLE_FILE_KINDS, ids=str)
def test_a_file_past_the_sources_bound_is_refused_with_its_size(
    tmp_path: Path, kind: ImportKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "SOURCE_MAX_BYTES", 1_000)
    big = tmp_path / "export.txt"
    big.write_text("x" * 2_000, encoding="utf-8")
    with pytest.raises(SanError, match="too large to import"):
        read_plan(big, kind)
