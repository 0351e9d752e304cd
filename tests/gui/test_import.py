"""File → Import… end to end: the preview of a vault, the import with its summary, the cards that follow with
the note's own tags, Undo import from the dialog and from File → Undo import, and closing the dialog while it
reads."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem
from pytestqt.qtbot import QtBot

from san_desktop.transfer import importer as importer_module
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from tests.support.cards import all_cards

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a dialog it shows
UNDONE = "Import undone: {count} moved to the Trash (restore them there, with their cards and quizzes)."


def _vault(folder: Path) -> Path:
    (folder / ".obsidian").mkdir(parents=True)
    (folder / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    (folder / "db").mkdir()
    (folder / "db" / "wal.md").write_text(
        "---\ntags: [sqlite, durability]\n---\n# WAL\n\nSQLite WAL mode lets readers continue while a writer "
        "commits; a checkpoint moves pages back into the database file.\n",
        encoding="utf-8",
    )
    (folder / "raft.md").write_text(
        "Raft elects a leader, which replicates its log to the followers. See [[WAL]].", encoding="utf-8"
    )
    (folder / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    return folder


def test_a_vault_is_previewed_imported_with_its_tags_and_undone(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    window.imports.import_action.trigger()
    dialog = window.imports.dialog
    assert dialog is not None
    assert dialog.isVisible()
    dialog.choose(vault)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=10_000)
    assert "a folder of notes" in dialog.status.text()
    assert "2 new, 0 already in your library, 1 left out" in dialog.status.text()
    assert dialog.table.rowCount() == 2
    cells = [[dialog.table.item(row, column) for column in range(3)] for row in range(2)]
    shown = {source.text(): tags.text() for _title, tags, source in cells if source and tags}
    assert shown == {"db/wal.md": "sqlite, durability", "raft.md": ""}
    assert [_cell(dialog.table, row, 3).text() for row in range(2)] == ["new", "new"]
    assert dialog.refused.item(0).text().startswith("diagram.png: ")

    with qtbot.waitSignal(dialog.imported, timeout=10_000) as imported:
        dialog.import_button.click()
    summary = imported.args[0]
    assert summary.imported == 2
    assert "Imported 2 new scraps" in dialog.status.text()
    assert "Imported 2 new scraps" in window.statusBar().currentMessage()
    assert dialog.undo_button.isVisible()

    def both_carded() -> bool:
        return len(all_cards(live_context.app.db)) == 2

    qtbot.waitUntil(both_carded, timeout=30_000)
    tags = {card.scrap_id: sorted(card.tags) for card in all_cards(live_context.app.db)}
    wal = next(s for s in summary.scrap_ids if live_context.app.scraps.get(s).source_ref == "db/wal.md")
    assert tags[wal] == ["durability", "sqlite"]
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 2, timeout=5_000)

    questions: list[str] = []

    def yes(question: str) -> bool:
        questions.append(question)
        return True

    window.imports.confirm = yes
    with qtbot.waitSignal(dialog.undone, timeout=10_000):
        dialog.undo_button.click()
    assert questions[0].startswith(f"Move the 2 scraps imported from {vault} on ")
    assert "None of them was edited since the import." in questions[0]
    assert dialog.status.text() == UNDONE.format(count="2 scraps")
    assert live_context.app.scraps.list_scraps() == []
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 0, timeout=5_000)
    assert not dialog.undo_button.isVisible()


def test_undo_import_from_the_file_menu_asks_first(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    plan = live_context.app.read_import(vault)
    live_context.app.store_import(plan)  # e.g. `san import` beside the open window
    qtbot.waitUntil(lambda: len(window.imports.batches) == 1, timeout=10_000)  # its notices reach the window
    menu = window.imports.undo_menu
    menu.aboutToShow.emit()
    [entry] = menu.actions()
    assert "2 from" in entry.text()
    assert str(vault) in entry.text()
    questions: list[str] = []

    def cancel(question: str) -> bool:
        questions.append(question)
        return False

    window.imports.confirm = cancel
    entry.trigger()
    qtbot.waitUntil(lambda: bool(questions), timeout=10_000)  # (counted off the GUI thread first)
    assert questions[0].startswith(f"Move the 2 scraps imported from {vault} on ")
    assert len(live_context.app.scraps.list_scraps()) == 2
    window.imports.confirm = lambda _text: True
    entry.trigger()
    qtbot.waitUntil(lambda: live_context.app.scraps.list_scraps() == [], timeout=10_000)
    qtbot.waitUntil(lambda: window.imports.batches == [], timeout=10_000)
    assert UNDONE.format(count="2 scraps") in window.statusBar().currentMessage()
    menu.aboutToShow.emit()
    assert [action.text() for action in menu.actions()] == ["No import to undo"]


def test_a_file_that_cannot_be_imported_says_why_and_closing_stops_nothing_half_done(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("just a line of text", encoding="utf-8")
    dialog = window.imports.open_dialog()
    dialog.choose(odd)
    qtbot.waitUntil(lambda: "Not a file SAN Desktop can import" in dialog.status.text(), timeout=10_000)
    assert not dialog.import_button.isEnabled()
    dialog.choose(_vault(tmp_path / "vault"))
    dialog.close()  # while it reads: what it read is dropped, nothing is stored
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=10_000)
    assert dialog.table.rowCount() == 0
    assert live_context.app.scraps.list_scraps() == []
    again = window.imports.open_dialog()  # a new dialog, not the closed one with its old state
    assert again is not dialog
    assert again.path_edit.text() == ""
    assert again.windowModality() == Qt.WindowModality.NonModal


def test_closing_the_dialog_while_it_imports_stops_and_keeps_a_batch_to_undo(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window quitting closes the dialog too: what was stored stays a batch that Undo import removes."""
    monkeypatch.setattr(importer_module, "CHUNK", 1)  # a transaction a note: the import is under way for a while
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(1000):
        (vault / f"note {n}.md").write_text(f"Note {n}: Raft elects a leader with a random timeout.", encoding="utf-8")
    dialog = window.imports.open_dialog()
    dialog.choose(vault)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=10_000)
    dialog.start_import()
    assert dialog.busy
    qtbot.waitUntil(lambda: dialog.bar.value() >= 1, timeout=10_000)  # under way
    dialog.close()
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=10_000)
    stored = len(live_context.app.scraps.list_scraps(limit=2000))
    assert 1 <= stored < 1000
    qtbot.waitUntil(lambda: bool(window.imports.batches), timeout=10_000)
    [batch] = window.imports.batches
    assert (batch.imported, batch.finished) == (stored, False)
    window.imports.confirm = lambda _text: True
    window.imports.undo(batch)
    qtbot.waitUntil(lambda: live_context.app.scraps.list_scraps() == [], timeout=10_000)


def test_a_folder_past_the_walks_bounds_is_a_sentence_in_the_dialog(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    vault = _vault(tmp_path / "vault")
    vault.joinpath(*["deeper"] * 70).mkdir(parents=True)
    dialog = window.imports.open_dialog()
    dialog.choose(vault)
    qtbot.waitUntil(lambda: "nothing was imported" in dialog.status.text(), timeout=10_000)
    assert dialog.status.text() == (
        f"{vault} has folders nested more than 64 deep (in deeper), more than a folder of notes holds, so nothing "
        "was imported. Choose the folder of the notes itself."
    )
    assert not dialog.import_button.isEnabled()
    assert dialog.table.rowCount() == 0
    assert live_context.app.scraps.list_scraps() == []


def test_closing_the_dialog_stops_the_walk_of_a_folder_without_notes(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: a large folder named by mistake (a home folder: here 200 folders and no note) is walked no
    further once the dialog is closed. Each listing of one of its folders is seen, however it is listed; the
    third waits until the dialog is closed."""
    home = tmp_path / "home"
    for n in range(200):
        (home / f"folder {n:03}").mkdir(parents=True)
    listed: list[Path] = []
    third, closed = threading.Event(), threading.Event()
    scandir, listdir = os.scandir, os.listdir

    def seen(path: Any) -> None:
        if isinstance(path, str | Path) and Path(path).is_relative_to(home):
            listed.append(Path(path))
            if len(listed) == 3:
                third.set()
                assert closed.wait(30)

    def watched_scandir(path: Any = ".") -> Any:
        seen(path)
        return scandir(path)

    def watched_listdir(path: Any = ".") -> Any:
        seen(path)
        return listdir(path)

    monkeypatch.setattr(os, "scandir", watched_scandir)
    monkeypatch.setattr(os, "listdir", watched_listdir)
    dialog = window.imports.open_dialog()
    dialog.choose(home)
    qtbot.waitUntil(third.is_set, timeout=10_000)
    dialog.close()
    closed.set()
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=10_000)
    assert len(listed) == 3  # the folder it was in was the last
    assert live_context.app.scraps.list_scraps() == []


def test_a_note_edited_since_its_import_is_previewed_as_updated_and_updates_its_scrap(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    """Issue 40: importing the vault again after editing one note made a second card for it."""
    vault = _vault(tmp_path / "vault")
    window.imports.import_action.trigger()
    dialog = window.imports.dialog
    assert dialog is not None
    dialog.choose(vault)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=10_000)
    with qtbot.waitSignal(dialog.imported, timeout=10_000):
        dialog.import_button.click()
    (vault / "raft.md").write_text("Raft elects a leader by majority vote; terms order the leaders.", encoding="utf-8")

    dialog.choose(vault)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=10_000)
    assert "0 new, 1 updated, 1 already in your library" in dialog.status.text()
    by_source = {_cell(dialog.table, row, 2).text(): _cell(dialog.table, row, 3) for row in range(2)}
    assert by_source["raft.md"].text() == "updated"
    assert "your edits of its card are kept" in by_source["raft.md"].toolTip()
    assert by_source["db/wal.md"].text() == "already there"
    with qtbot.waitSignal(dialog.imported, timeout=10_000) as imported:
        dialog.import_button.click()
    assert (imported.args[0].imported, imported.args[0].updated) == (0, 1)
    contents = sorted(scrap.content for scrap in live_context.app.scraps.list_scraps())
    assert len(contents) == 2
    assert "Raft elects a leader by majority vote; terms order the leaders." in contents


def _cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    item = table.item(row, column)
    assert item is not None
    return item
