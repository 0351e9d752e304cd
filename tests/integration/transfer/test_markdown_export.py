"""The Markdown export: a file per card and per TIL day with YAML front matter, wikilinks from a day to its
cards, and exporting again into the same folder: updated, never duplicated, nobody else's file touched."""

from __future__ import annotations

import errno
import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml

from san_desktop.app import SanApp
from san_desktop.core.errors import SanError, StorageFullError
from san_desktop.core.user_files import Confined
from san_desktop.db.tables import knowledge_cards, scraps
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.cards import CardSummary
from san_desktop.transfer.export_manifest import MANIFEST_NAME
from san_desktop.transfer.files import NothingToExportError
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import finished_til, til_text

TEXTS = (QUIZ_TEXTS[0], QUIZ_TEXTS[2], QUIZ_TEXTS[5], QUIZ_TEXTS[8])  # two English, two Korean
SOURCE = "https://example.org/raft?lang=ko"


def _read(path: Path) -> tuple[dict[str, Any], str]:
    """A file's front matter (as YAML reads it) and its body."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    header, body = text[4:].split("\n---\n\n", 1)
    values = yaml.safe_load(header)
    assert isinstance(values, dict)
    return values, body


def _files(folder: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """Every Markdown file the export wrote under ``folder`` (with front matter) by its relative path."""
    paths = [path for path in sorted(folder.rglob("*.md")) if path.read_text(encoding="utf-8").startswith("---\n")]
    return {path.relative_to(folder).as_posix(): _read(path) for path in paths}


def _times(app: SanApp, card_id: str) -> tuple[datetime, datetime]:
    """When the card's scrap was captured, and when the card last changed."""
    with app.db.engine.connect() as conn:
        row = conn.execute(
            sa.select(scraps.c.created_at, knowledge_cards.c.updated_at)
            .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
            .where(knowledge_cards.c.id == card_id)
        ).one()
    return row[0], row[1]


def _cards(app: SanApp) -> dict[str, CardSummary]:
    return {card.id: card for card in app.cards.list_cards(limit=1000)}


@pytest.fixture
def day(app: SanApp) -> str:
    """Today's cards (one from a page with its address) and its finished TIL."""
    app.capture_html("<p>Raft elects a leader; the leader replicates its log to a majority.</p>", SOURCE)
    return finished_til(app, TEXTS)


def _card_file(files: dict[str, tuple[dict[str, Any], str]], card_id: str) -> str:
    (path,) = [path for path, (values, _body) in files.items() if values["san_id"] == card_id]
    return path


def test_each_card_has_a_file_whose_front_matter_says_what_it_is(app: SanApp, day: str, tmp_path: Path) -> None:
    result = app.export_markdown(tmp_path / "vault")

    cards = _cards(app)
    files = _files(tmp_path / "vault")
    assert (result.cards, result.tils, result.written, result.removed) == (len(cards), 1, len(cards) + 1, 0)
    assert len([path for path in files if path.startswith("Cards/")]) == len(cards)
    for card in cards.values():
        values, body = files[_card_file(files, card.id)]
        detail = app.cards.get(card.id)
        captured, updated = _times(app, card.id)
        assert values == {
            "title": card.title,
            "tags": list(card.tags),
            "category": card.category,
            "source": detail.source_ref,
            "created": captured.isoformat(),  # when it was scrapped, not analysed
            "updated": updated.isoformat(),
            "san_id": card.id,
        }
        assert body.strip().startswith(f"# {card.title}\n\n<!-- san:summary -->\n\n{card.summary}\n\n")
        text = detail.refined_content or detail.content
        assert f"<!-- san:text -->\n\n{text.strip()}\n\n<!-- /san:text -->" in body  # the whole text
    assert SOURCE in {files[_card_file(files, card_id)][0]["source"] for card_id in cards}
    assert any("격리" in values["title"] + body for values, body in files.values())  # Korean as written


def test_the_til_of_a_day_links_its_cards_by_their_file_names(app: SanApp, day: str, tmp_path: Path) -> None:
    app.export_markdown(tmp_path / "vault")

    files = _files(tmp_path / "vault")
    values, body = files[f"TIL/{day}.md"]
    assert values["date"] == day
    assert values["san_id"] == app.til.get(day).summary_id
    assert body.startswith(til_text(app, day).rstrip())
    links = {line[len("- [[") : -len("]]")] for line in body.splitlines() if line.startswith("- [[")}
    assert links == {Path(_card_file(files, card_id)).stem for card_id in _cards(app)}


def test_exporting_again_changes_nothing_that_did_not_change(app: SanApp, day: str, tmp_path: Path) -> None:
    first = app.export_markdown(tmp_path / "vault")
    before = {path: path.read_bytes() for path in (tmp_path / "vault").rglob("*.md")}
    again = app.export_markdown(tmp_path / "vault")
    assert (again.written, again.unchanged, again.removed) == (0, first.written, 0)
    assert {path: path.read_bytes() for path in (tmp_path / "vault").rglob("*.md")} == before


def test_a_renamed_card_moves_to_its_new_name_and_the_til_follows(app: SanApp, day: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    app.export_markdown(vault)
    card = next(iter(_cards(app).values()))
    old = _card_file(_files(vault), card.id)

    app.edit_card(card.id, CardEdit(title="Raft: who leads? / 누가 이끄나"))
    result = app.export_markdown(vault)

    files = _files(vault)
    assert _card_file(files, card.id) == "Cards/Raft who leads - 누가 이끄나.md"
    assert not (vault / old).exists()
    assert result.removed == 1
    assert len(files) == len(_cards(app)) + 1
    assert "- [[Raft who leads - 누가 이끄나]]" in files[f"TIL/{day}.md"][1]


def test_files_the_export_did_not_write_are_left_alone_and_their_names_not_taken(
    app: SanApp, day: str, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    card = next(iter(_cards(app).values()))
    (vault / "Cards").mkdir(parents=True)
    (vault / "Cards" / f"{card.title.upper()}.md").write_text("my own note\n")  # the same name, to Windows
    (vault / "Cards" / "my notes.md").write_text("keep me\n")
    (vault / "TIL").mkdir()
    (vault / "TIL" / f"{day}.md").write_text("my own day\n")

    app.export_markdown(vault)
    app.edit_card(card.id, CardEdit(title="Another title"))
    app.export_markdown(vault)  # its file moves: the person's files stay

    assert (vault / "Cards" / f"{card.title.upper()}.md").read_text() == "my own note\n"
    assert (vault / "Cards" / "my notes.md").read_text() == "keep me\n"
    assert (vault / "TIL" / f"{day}.md").read_text() == "my own day\n"
    files = _files(vault)
    assert _card_file(files, card.id) == "Cards/Another title.md"
    assert f"TIL/{day} (2).md" in files


def test_a_file_edited_after_the_export_is_kept_and_the_card_written_beside_it(
    app: SanApp, day: str, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    app.export_markdown(vault)
    card = next(iter(_cards(app).values()))
    mine = vault / _card_file(_files(vault), card.id)
    mine.write_text(mine.read_text(encoding="utf-8") + "\nMy own thoughts.\n", encoding="utf-8")

    result = app.export_markdown(vault)

    assert result.kept == (mine.relative_to(vault).as_posix(),)
    assert mine.read_text(encoding="utf-8").endswith("My own thoughts.\n")
    assert (vault / "Cards" / f"{mine.stem} (2).md").exists()


def test_equal_titles_and_unsafe_ones_get_distinct_safe_names(app: SanApp, day: str, tmp_path: Path) -> None:
    first, second, third, fourth, *_ = _cards(app).values()
    for card, title in ((first, "CON"), (second, "Same title"), (third, "same TITLE"), (fourth, "a:b?c/d")):
        app.edit_card(card.id, CardEdit(title=title))
    app.export_markdown(tmp_path / "vault")
    files = _files(tmp_path / "vault")
    assert _card_file(files, first.id) == "Cards/CON_.md"
    equal = {_card_file(files, second.id).casefold(), _card_file(files, third.id).casefold()}
    assert equal == {"cards/same title.md", "cards/same title (2).md"}  # one name to Windows and macOS
    assert _card_file(files, fourth.id) == "Cards/a b c-d.md"


def test_a_deleted_scraps_card_file_goes_with_it(app: SanApp, day: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    app.export_markdown(vault)
    card = next(iter(_cards(app).values()))
    path = vault / _card_file(_files(vault), card.id)
    app.delete_scrap(card.scrap_id)
    result = app.export_markdown(vault)
    assert result.removed == 1
    assert not path.exists()
    assert card.id not in {values["san_id"] for values, _body in _files(vault).values()}


def test_a_manifest_naming_files_elsewhere_deletes_nothing(app: SanApp, day: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    outside = tmp_path / "precious.md"
    outside.write_text("precious\n")
    vault.mkdir()
    sha = hashlib.sha256(outside.read_bytes()).hexdigest()
    hostile = {"format": 1, "files": {"card:x": {"path": "Cards/../../precious.md", "sha256": sha}}, "pending": []}
    (vault / MANIFEST_NAME).write_text(json.dumps(hostile))
    app.export_markdown(vault)
    assert outside.read_text() == "precious\n"


def test_nothing_to_export_and_a_file_for_a_folder_are_refused(app: SanApp, tmp_path: Path) -> None:
    with pytest.raises(NothingToExportError, match="no cards or TIL notes"):
        app.export_markdown(tmp_path / "vault")
    assert not (tmp_path / "vault").exists()
    finished_til(app)
    (tmp_path / "file").write_text("x")
    with pytest.raises(SanError, match="is a file"):
        app.export_markdown(tmp_path / "file")


def test_an_export_cut_short_is_finished_by_the_next_without_duplicates(
    app: SanApp, day: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    app.export_markdown(vault)
    renamed, changed, *_ = _cards(app).values()
    old = vault / _card_file(_files(vault), renamed.id)
    app.edit_card(renamed.id, CardEdit(title="A new title"))
    app.edit_card(changed.id, CardEdit(summary="A new summary."))

    write = Confined.write

    def disk_full(folder: Confined, relative: str, data: bytes, *, overwrite: bool) -> None:
        if relative != MANIFEST_NAME:  # the manifest says what is about to be written; then the disk fills up
            raise OSError(errno.ENOSPC, "No space left on device")
        write(folder, relative, data, overwrite=overwrite)

    with monkeypatch.context() as patch:
        patch.setattr(Confined, "write", disk_full)
        with pytest.raises(StorageFullError):
            app.export_markdown(vault)
    app.export_markdown(vault)

    files = _files(vault)
    assert len(files) == len(_cards(app)) + 1
    assert not old.exists()
    assert _card_file(files, renamed.id) == "Cards/A new title.md"
    assert files[_card_file(files, changed.id)][1].startswith(
        f"# {changed.title}\n\n<!-- san:summary -->\n\nA new summary."
    )


def _listing(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("linked", ["Cards", "TIL"])
def test_a_folder_of_the_export_that_links_outside_is_refused_and_nothing_there_touched(
    app: SanApp, day: str, tmp_path: Path, linked: str
) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    outside.mkdir()
    victim = outside / f"{day}.md" if linked == "TIL" else outside / "victim.md"
    victim.write_text("the person's own note\n")
    (outside / "other.txt").write_text("also theirs\n")
    vault.mkdir()
    (vault / linked).symlink_to(outside, target_is_directory=True)
    sha = hashlib.sha256(victim.read_bytes()).hexdigest()
    hostile = {"format": 1, "files": {"card:x": {"path": f"{linked}/{victim.name}", "sha256": sha}}, "pending": []}
    (vault / MANIFEST_NAME).write_text(json.dumps(hostile))
    before, manifest = _listing(outside), (vault / MANIFEST_NAME).read_bytes()

    with pytest.raises(SanError, match=f"{vault / linked} is a link \\(to {outside}\\): SAN Desktop does not follow"):
        app.export_markdown(vault)

    assert _listing(outside) == before  # nothing deleted, replaced or written there
    assert sorted(entry.name for entry in vault.iterdir()) == sorted([linked, MANIFEST_NAME])
    assert (vault / MANIFEST_NAME).read_bytes() == manifest


def test_a_manifest_that_is_a_link_is_refused_and_left_as_it_is(app: SanApp, day: str, tmp_path: Path) -> None:
    vault, elsewhere = tmp_path / "vault", tmp_path / "settings.json"
    elsewhere.write_text('{"format": 1, "files": {}}')
    vault.mkdir()
    (vault / MANIFEST_NAME).symlink_to(elsewhere)

    with pytest.raises(SanError, match=f"{vault / MANIFEST_NAME} is a link, not the list of files SAN Desktop keeps"):
        app.export_markdown(vault)

    assert (vault / MANIFEST_NAME).is_symlink()
    assert elsewhere.read_text() == '{"format": 1, "files": {}}'
    assert sorted(entry.name for entry in vault.iterdir()) == [MANIFEST_NAME]


def test_a_card_file_that_links_outside_is_neither_removed_nor_written_through(
    app: SanApp, day: str, tmp_path: Path
) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside.md"
    first = app.export_markdown(vault)
    card = next(iter(_cards(app).values()))
    own = vault / _card_file(_files(vault), card.id)
    outside.write_bytes(own.read_bytes())  # the same bytes: the manifest's digest matches it
    own.unlink()
    own.symlink_to(outside)
    app.delete_scrap(card.scrap_id)  # its file would be removed, were it still the export's

    result = app.export_markdown(vault)

    assert own.is_symlink()
    assert outside.read_bytes().startswith(b"---\n")
    assert (result.removed, result.written) == (0, 1)  # only the TIL changed (a card less)
    assert first.cards == result.cards + 1


def test_a_dry_run_plans_the_export_and_writes_nothing(app: SanApp, day: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    planned = app.export_markdown(vault, dry_run=True)
    assert not vault.exists()
    assert planned.dry_run
    assert planned.summary.startswith(f"Would export {planned.cards} cards and 1 TIL note to {vault} (")
    done = app.export_markdown(vault)
    assert (planned.written, planned.unchanged, planned.removed) == (done.written, 0, 0)

    card = next(iter(_cards(app).values()))
    app.edit_card(card.id, CardEdit(title="Renamed"))
    before = _listing(vault)
    again = app.export_markdown(vault, dry_run=True)
    assert _listing(vault) == before
    assert (again.written, again.removed) == (2, 1)  # the card's new file and its day; its old file
