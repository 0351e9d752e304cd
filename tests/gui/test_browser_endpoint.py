"""The browser extension's endpoint in the window: listening while the window runs (its port in the data
folder), a page sent reaching the Inbox, turned off and on in Settings, the token shown, copied (marked a
secret: the clipboard watcher leaves it; gone from the clipboard when the app quits) and regenerated (the old
one refused)."""

from __future__ import annotations

import json
import threading

import httpx
import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.window.browser_endpoint import PORT_FILE
from san_desktop.web import extract

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a dialog it shows
EXTENSION = "chrome-extension://abcdefghijklmnop"


def _send(port: int, token: str, text: str) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{port}/v2/scraps",
        json={"url": "https://a.example/post", "selection": text, "kind": "selection"},
        headers={"Authorization": f"Bearer {token}", "Origin": EXTENSION},
        timeout=30,
    )


def test_a_selection_sent_from_the_browser_reaches_the_inbox_and_the_port_goes_with_the_window(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    port = window.browser_endpoint.port
    assert port is not None
    port_file = live_context.app.data_dir / PORT_FILE
    assert json.loads(port_file.read_text(encoding="utf-8"))["port"] == port
    token = window.browser_endpoint.token()
    answer = _send(port, token, "Raft elects a leader with randomised timeouts.")
    assert answer.status_code == 200, answer.text
    scrap_id = answer.json()["scrap_id"]
    qtbot.waitUntil(lambda: window.inbox.model.position_of(scrap_id) == 0, timeout=10_000)
    window.close()
    assert not port_file.exists()
    assert window.browser_endpoint.port is None  # (its port may be another program's from now on)


def test_settings_show_copy_and_regenerate_the_token_and_turn_the_endpoint_off(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    browser = window.browser_endpoint
    port = browser.port
    assert port is not None
    window.watch_action.setChecked(True)  # the watcher must not scrap the copied token
    dialog = SettingsDialog(live_context, window, browser=browser)
    qtbot.addWidget(dialog)
    section = dialog.browser
    assert section is not None
    qtbot.waitUntil(section.copy_button.isEnabled, timeout=10_000)
    old = section.token.text()
    assert old == browser.token()
    assert f"127.0.0.1:{port}" in section.status.text()
    section.copy_button.click()
    assert QGuiApplication.clipboard().text() == old
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    assert live_context.app.scraps.list_scraps() == []  # the watcher left the secret alone

    section.confirm = lambda _question: True
    section.regenerate_button.click()
    qtbot.waitUntil(lambda: section.token.text() not in ("", old), timeout=10_000)
    assert _send(port, old, "Sent with the old token.").status_code == 401
    assert _send(port, section.token.text(), "Sent with the new token.").status_code == 200

    section.enabled.setChecked(False)
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: browser.port is None, timeout=10_000)
    assert not live_context.settings.capture.browser_endpoint
    assert not (live_context.app.data_dir / PORT_FILE).exists()

    again = SettingsDialog(live_context, window, browser=browser)
    qtbot.addWidget(again)
    assert again.browser is not None
    assert "Not listening" in again.browser.status.text()
    again.browser.enabled.setChecked(True)
    with qtbot.waitSignal(again.accepted, timeout=10_000):
        again.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: browser.port is not None, timeout=10_000)

    window.close()  # quitting takes the copied token off the clipboard
    assert QGuiApplication.clipboard().text() == ""


def test_the_article_extractor_is_loaded_in_the_background_after_start(
    qtbot: QtBot, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its first page costs a fifth of a second of Python: not beside the window when the first one arrives."""
    on_gui_thread: list[bool] = []
    real = extract.warm_up

    def warm_up() -> None:
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        real()

    monkeypatch.setattr(extract, "warm_up", warm_up)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    qtbot.waitUntil(lambda: on_gui_thread == [False], timeout=30_000)
