"""The export dialog: Anki (with or without the cards) or Markdown, run off the GUI thread, its summary or
its refusal shown in the dialog; a file that is there replaced only once the person said so."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from san_desktop.transfer.restore import restore_backup
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.transfer.export_dialog import ExportDialog
from tests.support.dialogs import MessageBoxAnswers
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import quizzes_of_today

WAIT = 20_000
OLD = b"the person's own file"
TEXTS = QUIZ_TEXTS[5:8]  # three Korean cards, six quizzes


def _dialog(qtbot: QtBot, context: AppContext) -> ExportDialog:
    dialog = ExportDialog(context)
    qtbot.addWidget(dialog)  # not shown: clicked as it is (the offscreen platform warns of shown dialogs)
    return dialog


def test_anki_with_the_cards_is_exported_and_summed_up(qtbot: QtBot, live_context: AppContext, tmp_path: Path) -> None:
    quizzes_of_today(live_context.app, TEXTS)
    dialog = _dialog(qtbot, live_context)
    assert not dialog.export_button.isEnabled()  # nowhere to export to yet
    dialog.destination.setText(str(tmp_path / "san.apkg"))
    dialog.include_cards.setChecked(True)

    with qtbot.waitSignal(dialog.exported, timeout=WAIT) as done:
        dialog.export_button.click()
        assert not dialog.export_button.isEnabled()  # one export at a time

    result = done.args[0]
    assert (result.quizzes, result.cards) == (6, 3)
    assert (tmp_path / "san.apkg").is_file()
    assert dialog.outcome.text() == result.summary
    assert dialog.export_button.isEnabled()


def test_markdown_goes_into_the_folder_chosen(qtbot: QtBot, live_context: AppContext, tmp_path: Path) -> None:
    quizzes_of_today(live_context.app, TEXTS)
    dialog = _dialog(qtbot, live_context)
    dialog.markdown_choice.setChecked(True)
    assert not dialog.include_cards.isEnabled()
    dialog.destination.setText(str(tmp_path / "vault"))

    with qtbot.waitSignal(dialog.exported, timeout=WAIT) as done:
        dialog.export_button.click()

    assert done.args[0].cards == 3
    assert len(list((tmp_path / "vault" / "Cards").glob("*.md"))) == 3
    assert dialog.outcome.text().startswith("Exported 3 cards and 0 TIL notes to ")


@pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for the question box it shows
def test_the_links_are_exported_as_bookmarks_and_a_file_there_is_replaced_only_when_asked(
    qtbot: QtBot, live_context: AppContext, tmp_path: Path
) -> None:
    live_context.app.capture_url("https://example.com/raft", "Raft")
    target = tmp_path / "links.html"
    target.write_bytes(OLD)
    dialog = _dialog(qtbot, live_context)
    dialog.bookmarks_choice.setChecked(True)
    assert dialog.destination.placeholderText().endswith(".html")  # a file is asked for, not a folder
    dialog.destination.setText(str(target))

    with (
        MessageBoxAnswers(QMessageBox.StandardButton.Cancel) as kept,
        qtbot.waitSignal(dialog.export_failed, timeout=WAIT),
    ):
        dialog.export_button.click()
    assert f"{target} already exists." in kept.asked[0]
    assert target.read_bytes() == OLD
    with MessageBoxAnswers(QMessageBox.StandardButton.Yes), qtbot.waitSignal(dialog.exported, timeout=WAIT) as done:
        dialog.export_button.click()
    assert done.args[0].links == 1
    assert 'HREF="https://example.com/raft"' in target.read_text(encoding="utf-8")
    assert dialog.outcome.text() == done.args[0].summary


def test_a_refusal_is_shown_in_the_dialog(qtbot: QtBot, live_context: AppContext, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, live_context)
    dialog.destination.setText(str(tmp_path / "san.apkg"))

    with qtbot.waitSignal(dialog.export_failed, timeout=WAIT) as failed:
        dialog.export_button.click()

    assert failed.args[0] == "Nothing to export: the library has no quizzes (make some, or export the cards) yet."
    assert dialog.outcome.text() == failed.args[0]
    assert dialog.export_button.isEnabled()
    assert not (tmp_path / "san.apkg").exists()


@pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")  # the offscreen platform
@pytest.mark.sqlite  # a backup .zip holds a SQLite library (a server's: `san db copy`)
def test_a_full_backup_from_the_file_menu_restores_elsewhere(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    live_context.app.capture_text("SQLite WAL mode lets readers continue while a writer commits.")
    window.imports.export_action.trigger()
    dialog = window.imports.export_dialog
    assert dialog is not None
    assert dialog.isVisible()
    dialog.backup_choice.setChecked(True)
    assert not dialog.include_cards.isEnabled()
    assert dialog.destination.placeholderText().endswith(".zip")
    dialog.destination.setText(str(tmp_path / "backup.zip"))
    with qtbot.waitSignal(dialog.exported, timeout=WAIT) as done:
        dialog.export_button.click()
    assert dialog.outcome.text().startswith(
        f"Backed up {live_context.app.data_dir} to {tmp_path / 'backup.zip'}: 1 scraps"
    )
    assert window.statusBar().currentMessage() == done.args[0].summary
    restored = restore_backup(tmp_path / "backup.zip", tmp_path / "elsewhere")
    assert restored.scraps == 1
    assert window.imports.open_export_dialog() is dialog  # the same dialog again, with what was chosen


@pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, showing the question
def test_an_existing_file_is_replaced_only_once_the_person_says_so(
    qtbot: QtBot, live_context: AppContext, tmp_path: Path
) -> None:
    quizzes_of_today(live_context.app, TEXTS)
    target = tmp_path / "san.apkg"
    target.write_bytes(OLD)
    dialog = _dialog(qtbot, live_context)
    dialog.destination.setText(str(target))

    with (
        MessageBoxAnswers(QMessageBox.StandardButton.Cancel) as kept,
        qtbot.waitSignal(dialog.export_failed, timeout=WAIT),
    ):
        dialog.export_button.click()
    assert len(kept.asked) == 1
    assert f"{target} already exists." in kept.asked[0]
    assert target.read_bytes() == OLD
    assert dialog.outcome.text() == f"Nothing was exported: {target} already exists and was kept."
    assert dialog.export_button.isEnabled()

    with MessageBoxAnswers(QMessageBox.StandardButton.Yes) as replaced, qtbot.waitSignal(dialog.exported, timeout=WAIT):
        dialog.export_button.click()
    assert len(replaced.asked) == 1
    assert f"{target} already exists." in replaced.asked[0]
    assert target.read_bytes()[:2] == b"PK"  # the package, in the file's place
    assert sorted(entry.name for entry in tmp_path.iterdir() if entry.name != "san-data") == ["san.apkg"]


@pytest.mark.sqlite  # a backup .zip holds a SQLite library
def test_a_link_is_refused_without_a_question_and_what_it_points_to_kept(
    qtbot: QtBot, live_context: AppContext, tmp_path: Path
) -> None:
    live_context.app.capture_text("SQLite WAL mode lets readers continue while a writer commits.")
    victim = tmp_path / "thesis.docx"
    victim.write_bytes(OLD)
    (tmp_path / "backup.zip").symlink_to(victim)
    dialog = _dialog(qtbot, live_context)
    dialog.backup_choice.setChecked(True)
    dialog.destination.setText(str(tmp_path / "backup.zip"))

    with (
        MessageBoxAnswers(QMessageBox.StandardButton.Yes) as answers,
        qtbot.waitSignal(dialog.export_failed, timeout=WAIT) as failed,
    ):
        dialog.export_button.click()

    assert answers.asked == []
    assert failed.args[0].startswith(f"{tmp_path / 'backup.zip'} is a link (to {victim}): SAN Desktop does not write")
    assert victim.read_bytes() == OLD
    assert (tmp_path / "backup.zip").is_symlink()
