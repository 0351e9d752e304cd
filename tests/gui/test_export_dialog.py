"""The export dialog: Anki (with or without the cards) or Markdown, run off the GUI thread, its summary or
its refusal shown in the dialog."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.transfer.restore import restore_backup
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.transfer.export_dialog import ExportDialog
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import quizzes_of_today

WAIT = 20_000
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
