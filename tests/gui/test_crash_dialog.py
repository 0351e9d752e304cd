"""The crash dialog opens on the GUI thread whichever thread raised (a message box made on a worker thread was a
blank window nobody could close), and once the app is closing an error is logged, not shown."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable

import pytest
from PySide6.QtCore import QCoreApplication, QRunnable, QThread, QThreadPool
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from san_desktop.core.errors import SanError
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.window import crash_dialog

Shown = list[tuple[bool, str]]  # (on the GUI thread, what was shown)


class _Raises(QRunnable):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def run(self) -> None:
        raise self.error


def _raise_on_python_thread(error: BaseException) -> None:
    def target() -> None:
        raise error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(10)


def _raise_in_thread_pool(error: BaseException) -> None:
    pool = QThreadPool()
    pool.start(_Raises(error))
    assert pool.waitForDone(10_000)


RAISERS = {"a Python thread": _raise_on_python_thread, "a QThreadPool runnable": _raise_in_thread_pool}


@pytest.fixture
def shown(qapp: QCoreApplication, monkeypatch: pytest.MonkeyPatch) -> Shown:
    """The crash handler as the app installs it, on a screen; what it shows, with the thread that showed it."""
    monkeypatch.setattr(crash_dialog, "_reporter", None, raising=False)
    monkeypatch.setattr(crash_dialog, "_closing", False, raising=False)
    monkeypatch.setattr(crash_dialog, "has_screen", lambda: True)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # (each restored after the test)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    calls: Shown = []

    def on_gui_thread() -> bool:
        return QThread.currentThread() == qapp.thread()

    monkeypatch.setattr(crash_dialog, "_show_crash", lambda details: calls.append((on_gui_thread(), details)))

    def critical(_parent: object, _title: str, text: str) -> QMessageBox.StandardButton:
        calls.append((on_gui_thread(), text))
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "critical", critical)
    crash_dialog.install_excepthook()
    return calls


@pytest.mark.parametrize("raise_on", RAISERS.values(), ids=RAISERS.keys())
def test_a_bug_raised_on_a_worker_thread_is_shown_on_the_gui_thread(
    qtbot: QtBot, shown: Shown, raise_on: Callable[[BaseException], None]
) -> None:
    raise_on(ValueError("a worker tripped"))
    qtbot.waitUntil(lambda: bool(shown), timeout=5_000)  # (delivered by the GUI thread's event loop)
    ((on_gui_thread, details),) = shown
    assert on_gui_thread
    assert "ValueError: a worker tripped" in details


@pytest.mark.parametrize("raise_on", RAISERS.values(), ids=RAISERS.keys())
def test_a_known_error_raised_on_a_worker_thread_is_said_on_the_gui_thread(
    qtbot: QtBot, shown: Shown, raise_on: Callable[[BaseException], None]
) -> None:
    raise_on(SanError("The folder is gone."))
    qtbot.waitUntil(lambda: bool(shown), timeout=5_000)
    assert shown == [(True, "The folder is gone.")]


def test_once_the_app_closes_errors_of_late_workers_are_logged_not_shown(
    qtbot: QtBot, shown: Shown, live_context: AppContext, caplog: pytest.LogCaptureFixture
) -> None:
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    caplog.set_level(logging.INFO, logger=crash_dialog.__name__)
    _raise_on_python_thread(RuntimeError("raised as the window closes"))  # on its way to the GUI thread
    window.close()  # the quit begins
    _raise_in_thread_pool(RuntimeError("raised after the window closed"))
    qtbot.waitUntil(lambda: caplog.text.count("Not shown: the app is closing") == 2, timeout=5_000)
    assert shown == []
    logged = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    assert len(logged) == 2
    assert "RuntimeError: raised as the window closes" in logged[0]
    assert "RuntimeError: raised after the window closed" in logged[1]
