"""The window always tells the truth: changes made by another process (the command line) reach it,
settings take effect at once, and the window and the command line agree on what is similar."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from san_desktop.app import Changes, SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobPool
from san_desktop.core.settings import SETTINGS_FILE, CaptureSettings, Settings
from san_desktop.services.settings_sync import SettingsConflictError
from san_desktop.ui.cards.page import similar_label
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from tests.gui.conftest import POLL_MS
from tests.support.processes import run_san


@pytest.fixture
def second_app(app: SanApp) -> Iterator[SanApp]:
    """Another facade on the same data directory, as the command line opens it (no lock)."""
    other = SanApp(start_backend(app.data_dir, kind="cli", lock=False, log_to_stderr=False))
    yield other
    other.close()


def _no_dialog() -> None:
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def test_a_scrap_deleted_elsewhere_leaves_the_inbox_and_cards(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, second_app: SanApp
) -> None:
    with qtbot.waitSignal(window.capture.captured, timeout=5_000) as captured:
        window.capture.scrap_mime(_text_mime("Vacuum rebuilds the SQLite database file to reclaim space."))
    scrap_id = captured.args[0].result.scrap_id

    def has_card() -> bool:
        return window.cards.model.card_of_scrap(scrap_id) is not None

    qtbot.waitUntil(has_card, timeout=20_000)
    qtbot.waitUntil(lambda: window.inbox.model.position_of(scrap_id) is not None, timeout=5_000)

    second_app.delete_scrap(scrap_id)  # what `san scrap delete` does

    qtbot.waitUntil(lambda: window.inbox.model.position_of(scrap_id) is None, timeout=10 * POLL_MS + 2_000)
    qtbot.waitUntil(lambda: not has_card(), timeout=5_000)
    _no_dialog()

    second_app.restore_scrap(scrap_id)  # and undone there: it comes back
    qtbot.waitUntil(has_card, timeout=10 * POLL_MS + 2_000)


def test_a_scrap_added_elsewhere_appears(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, second_app: SanApp
) -> None:
    scrap_id = second_app.capture_text("Added from the command line while the window is open.").value.scrap_id
    qtbot.waitUntil(lambda: window.inbox.model.position_of(scrap_id) == 0, timeout=10 * POLL_MS + 2_000)


def test_settings_written_elsewhere_are_used_and_the_dialog_warns_before_overwriting_them(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    dialog = SettingsDialog(live_context, window)
    qtbot.addWidget(dialog)
    assert live_context.settings.capture.max_bytes == 1_000_000

    result = run_san("config", "set", "capture.max_bytes", "2000")  # another process
    assert result.returncode == 0, result.stderr
    qtbot.waitUntil(lambda: live_context.settings.capture.max_bytes == 2000, timeout=10_000)
    assert live_context.app.scraps.max_bytes == 2000  # in use at once, no restart
    qtbot.waitUntil(lambda: "changed by another program" in dialog.save_status.text(), timeout=5_000)
    assert "overwrites" in dialog.save_status.text()

    with qtbot.waitSignal(dialog.accepted, timeout=5_000):  # saved after the warning: the user's choice
        dialog._on_save()
    saved = json.loads((live_context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    assert saved["capture"]["max_bytes"] == 1_000_000


def test_saving_over_a_file_changed_since_loading_is_refused_until_confirmed(app: SanApp, second_app: SanApp) -> None:
    second_app.save_settings(replace(second_app.settings, capture=CaptureSettings(max_bytes=5000)))
    mine = replace(app.settings, capture=CaptureSettings(max_bytes=7000))
    with pytest.raises(SettingsConflictError, match="changed by another program"):
        app.save_settings(mine)
    assert json.loads(app.settings_sync.path.read_text(encoding="utf-8"))["capture"]["max_bytes"] == 5000
    app.save_settings(mine, overwrite=True)
    assert json.loads(app.settings_sync.path.read_text(encoding="utf-8"))["capture"]["max_bytes"] == 7000


def test_the_apps_own_pause_is_not_news_from_another_program(
    app: SanApp, second_app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24: Pause on the Jobs page was followed by "Settings changed by another program": the data
    folder's watcher asks for a poll as soon as settings.json is replaced, and that poll ran while the
    pause was still being saved. Here it starts right there, between the write and the rest of the save."""
    import san_desktop.core.settings as core_settings
    import san_desktop.services.settings_sync as app_module  # (where the facade's settings are saved)

    polled: list[Changes] = []
    polls: list[threading.Thread] = []
    write = core_settings.save_settings  # what the settings' sync calls to write the file

    def write_then_poll(data_dir: Path, settings: Settings) -> None:
        write(data_dir, settings)
        poll = threading.Thread(target=lambda: polled.append(app.poll_external()))  # the other ops thread's
        poll.start()
        polls.append(poll)

    monkeypatch.setattr(app_module, "save_settings", write_then_poll)
    changes = app.set_pool_paused(JobPool.AI, True)
    polls.pop().join(10)
    assert polled
    assert not any(item.external or item.settings for item in polled), polled
    assert changes.settings
    assert not changes.external
    assert not app.poll_external()  # nothing left to take up either
    assert app.settings.jobs.paused(JobPool.AI)

    monkeypatch.setattr(app_module, "save_settings", write)
    second_app.set_pool_paused(JobPool.AI, False)  # another program's change still is news
    news = app.poll_external()
    assert news.settings
    assert news.external
    assert not app.settings.jobs.paused(JobPool.AI)


def test_the_window_and_the_command_line_agree_on_similar_cards(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    texts = [
        "SQLite WAL mode lets readers continue while a writer commits to the database.",
        "In WAL mode SQLite readers do not block the writer and the writer does not block readers.",
        "A checkpoint copies pages from the SQLite write-ahead log back into the database file.",
        "React hooks let function components keep state between renders.",
    ]
    for text in texts:
        with qtbot.waitSignal(window.capture.captured, timeout=5_000):
            window.capture.scrap_mime(_text_mime(text))
    qtbot.waitUntil(lambda: window.cards.model.rowCount() == len(texts), timeout=20_000)
    card = window.cards.model.row_at(len(texts) - 1)  # the first text's card
    assert card is not None
    window.cards.open_card(card.id)
    qtbot.waitUntil(lambda: window.cards.similar.count() > 0, timeout=5_000)
    shown = [window.cards.similar.item(row).text() for row in range(window.cards.similar.count())]
    heading = window.cards.similar_label.text()

    result = run_san("cards", "similar", card.id, "--json")
    assert result.returncode == 0, result.stderr
    from_cli = json.loads(result.stdout)
    assert shown == [similar_label(item["card"]["title"], item["score"]) for item in from_cli]
    assert all(0.0 <= item["score"] <= 1.0 for item in from_cli)
    assert (heading == "Similar cards") == from_cli[0]["within_threshold"]


def _text_mime(text: str) -> QMimeData:
    mime = QMimeData()
    mime.setText(text)
    return mime
