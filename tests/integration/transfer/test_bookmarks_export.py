"""``san export bookmarks``: the library's links as a Netscape bookmarks file that SAN Desktop's own bookmarks
reader takes back (addresses, titles, tags, capture times), written as every export to one file writes: never
over a file unasked, never through a link, whole or not at all, nothing on a dry run, and a sentence for every
refusal."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.enums import JobPool, JobStatus, JobType, SourceType
from san_desktop.services.card_edits import CardEdit
from san_desktop.transfer.bookmarks_export import BookmarksExport
from san_desktop.transfer.files import NothingToExportError
from san_desktop.transfer.items import ImportKind, ImportPlan
from san_desktop.transfer.readers import read_plan
from san_desktop.transfer.readers._common import Ticker
from san_desktop.transfer.readers.bookmarks import DOCTYPE, read_bookmarks
from tests.support.pages import Page, Site, website
from tests.support.til import cards_of, executor, run_one

OLD = b'<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p><DT><A HREF="https://kept.example/">kept</A></DL>\n'
WAL_PAGE = b"""<!doctype html><html><head><title>WAL mode in SQLite</title></head><body><article>
<h1>WAL mode in SQLite</h1><p>In WAL mode readers keep reading the last committed pages while one writer
appends new frames to the write-ahead log; a checkpoint later copies the frames back into the database.</p>
<p>Readers never block the writer and the writer never blocks readers, so a desktop app stays responsive.</p>
</article></body></html>"""
RAFT_PAGE = """<!doctype html><html><head><title>Raft: 리더 선출</title></head><body><article>
<h1>Raft: 리더 선출</h1><p>Raft elects one leader per term; a follower that hears nothing for an election
timeout becomes a candidate and asks every other node for its vote. 과반의 표를 얻으면 리더가 된다.</p>
<p>The leader replicates its log to the followers and commits an entry once a majority stored it.</p>
</article></body></html>""".encode()
TRICKY_TITLE = 'Fish & <Chips> "quoted" — 생선'
TRICKY_ADDRESS = "https://tricky.example/search?q=fish&lang=ko"


@pytest.fixture
def site() -> Iterator[Site]:
    with website() as served:
        yield served


def _fetched(app: SanApp, addresses: list[str]) -> None:
    """Each link's page downloaded from the local site, then its card made (links captured later, to
    addresses off this machine, are never fetched: their fetch jobs stay queued)."""
    for address in addresses:
        app.capture_url(address)
    for _address in addresses:
        while run_one(app, JobType.PAGE_FETCH).status is JobStatus.PENDING:  # (a retry, made due at once)
            pass
    executor(app).drain(JobPool.AI)


def _library(app: SanApp, site: Site) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Two fetched links with cards and tags, a link not fetched yet (its title as given, no card), a deleted
    link and a typed text; the live links' addresses -> (title, tags)."""
    wal = site.serve("/wal", Page(WAL_PAGE))
    raft = site.serve("/raft", Page(RAFT_PAGE))
    cards_of(app, ["Typed text is not a link: it has no address to bookmark, only its words here."])
    _fetched(app, [wal, raft])
    gone = app.capture_url("https://gone.example/post", "Deleted").value.scrap_id
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    app.delete_scrap(gone)
    cards = {app.cards.get(card.id).source_ref: card for card in app.cards.list_cards(limit=100)}
    app.edit_card(cards[wal].id, CardEdit(tags=("write-ahead log", "build cache", "한국어 태그")))
    app.edit_card(cards[raft].id, CardEdit(tags=("distributed",)))
    return {
        wal: ("WAL mode in SQLite", ("build cache", "write-ahead log", "한국어 태그")),
        raft: ("Raft: 리더 선출", ("distributed",)),
        TRICKY_ADDRESS: (TRICKY_TITLE, ()),
    }


def _read_back(path: Path) -> ImportPlan:
    plan = read_plan(path)
    assert plan.kind is ImportKind.BOOKMARKS  # (told by its content)
    return plan


def test_the_links_come_back_through_the_bookmarks_reader_with_their_titles_tags_and_times(
    app: SanApp, site: Site, tmp_path: Path
) -> None:
    expected = _library(app, site)
    result = app.export_bookmarks(tmp_path / "links.html")

    assert result == BookmarksExport(tmp_path / "links.html", links=3)
    assert result.path.read_text(encoding="utf-8").startswith(DOCTYPE + "\n")
    plan = _read_back(result.path)
    assert plan.refused == []
    read = {item.source_ref: (item.title, tuple(sorted(item.tags, key=str.casefold))) for item in plan.items}
    assert read == expected
    assert [item.source_type for item in plan.items] == [SourceType.URL] * 3
    captured = {scrap.source_ref: scrap.created_at for scrap in app.scraps.list_scraps(limit=100)}
    for item in plan.items:
        assert item.captured_at is not None
        assert item.captured_at.timestamp() == int(captured[item.source_ref].timestamp())  # ADD_DATE: seconds


def test_a_title_and_an_address_with_markup_characters_are_escaped_and_read_back_as_they_were(
    app: SanApp, tmp_path: Path
) -> None:
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    path = app.export_bookmarks(tmp_path / "links.html").path

    text = path.read_text(encoding="utf-8")
    assert '<A HREF="https://tricky.example/search?q=fish&amp;lang=ko" ADD_DATE="' in text
    assert ">Fish &amp; &lt;Chips&gt; &quot;quoted&quot; — 생선</A>" in text
    assert "<Chips>" not in text
    (item,) = read_bookmarks(text, str(path), Ticker(lambda: False, None)).items
    assert (item.content, item.title) == (TRICKY_ADDRESS, TRICKY_TITLE)


def test_an_existing_file_is_kept_unless_told_to_overwrite(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    target = tmp_path / "out" / "links.html"
    target.parent.mkdir()
    target.write_bytes(OLD)

    assert main(["export", "bookmarks", str(target)]) == 1
    assert capsys.readouterr().err == (
        f"san: {target} already exists: nothing was written. Choose another name, or replace it (--overwrite).\n"
    )
    assert target.read_bytes() == OLD

    assert main(["export", "bookmarks", str(target), "--overwrite"]) == 0
    assert capsys.readouterr().out == f"Exported 1 link as bookmarks to {target}\n"
    assert [item.content for item in _read_back(target).items] == [TRICKY_ADDRESS]
    assert os.listdir(target.parent) == ["links.html"]  # no temporary file left beside it


def test_a_dry_run_says_what_it_would_write_and_writes_nothing(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    new, old = tmp_path / "new.html", tmp_path / "old.html"
    old.write_bytes(OLD)

    assert main(["export", "bookmarks", str(new), "--dry-run"]) == 0
    assert capsys.readouterr().out == f"Would export 1 link as bookmarks to {new}; nothing was written\n"
    assert main(["export", "bookmarks", str(old), "--dry-run", "--overwrite", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["links"], said["replaced"], said["dry_run"]) == (1, True, True)

    assert not new.exists()
    assert old.read_bytes() == OLD
    assert sorted(os.listdir(tmp_path)) == ["old.html", "san-data"]


@pytest.mark.parametrize("overwrite", [False, True], ids=["asked", "told to overwrite"])
def test_a_link_is_refused_and_what_it_points_to_left_as_it_was(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str], overwrite: bool
) -> None:
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    victim = tmp_path / "thesis.html"
    victim.write_bytes(OLD)
    link = tmp_path / "out" / "links.html"
    link.parent.mkdir()
    link.symlink_to(victim)

    assert main(["export", "bookmarks", str(link), *(["--overwrite"] if overwrite else [])]) == 1

    err = capsys.readouterr().err
    assert f"{link} is a link (to {victim}): SAN Desktop does not write through links" in err
    assert victim.read_bytes() == OLD
    assert link.is_symlink()
    assert os.listdir(link.parent) == ["links.html"]


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("nowhere/links.html", "Cannot write {path}: there is no folder {path.parent} (create it, or choose another)."),
        ("links.txt", "{path} does not end in .html: browsers import bookmarks files named so (e.g. links.html)."),
        ("folder.html", "{path} is a folder: give a file name, e.g. {path}/bookmarks.html."),
        ("pipe.html", "{path} is a pipe (FIFO), not a regular file: nothing was written. Give a file name."),
    ],
)
def test_a_bad_path_is_refused_with_a_sentence(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, said: str
) -> None:
    app.capture_url(TRICKY_ADDRESS, TRICKY_TITLE)
    (tmp_path / "folder.html").mkdir()
    os.mkfifo(tmp_path / "pipe.html")
    path = tmp_path / name
    before = sorted(os.listdir(tmp_path))

    for told in ([], ["--overwrite"]):
        assert main(["export", "bookmarks", str(path), *told]) == 1
        assert capsys.readouterr().err == f"san: {said.format(path=path)}\n"
    assert sorted(os.listdir(tmp_path)) == before
    assert list((tmp_path / "folder.html").iterdir()) == []


def test_a_library_without_links_has_nothing_to_export(app: SanApp, tmp_path: Path) -> None:
    cards_of(app, ["Typed text is not a link: it has no address to bookmark, only its words here."])
    with pytest.raises(NothingToExportError, match="the library has no links yet"):
        app.export_bookmarks(tmp_path / "links.html")
    assert not (tmp_path / "links.html").exists()
