"""Quitting (Ctrl+Q in any window, the tray's Quit, the main window's close button) closes every window of
the app once: unsaved edits in a review window are asked about once (Save / Discard / Cancel), then the
runner stops and the app ends; no window outlives the main one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from san_desktop import __main__ as entry
from san_desktop.app import open_app
from san_desktop.core.enums import TilVersionKind
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.til.review import TilReviewWindow
from tests.support.dialogs import MessageBoxAnswers
from tests.support.til import finished_til

TYPED = "A line typed in the review window."
SAVE, DISCARD, CANCEL = (
    QMessageBox.StandardButton.Save,
    QMessageBox.StandardButton.Discard,
    QMessageBox.StandardButton.Cancel,
)
# the offscreen platform says so for windows it shows and raises (the main window, the review window)
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "systemTrayWindowChanged", "does not support raise")


@pytest.fixture
def main(qtbot: QtBot, live_context: AppContext) -> Iterator[MainWindow]:
    """The main window over a day with a finished TIL, shown on the TIL page, the runner started."""
    finished_til(live_context.app)
    window = MainWindow(live_context)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    window.show_page("til")
    yield window
    with MessageBoxAnswers(DISCARD):  # whatever a test left open and unsaved
        for widget in visible_windows():
            widget.close()
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow | TilReviewWindow):
            widget.deleteLater()


def dirty_review(qtbot: QtBot, main: MainWindow) -> TilReviewWindow:
    """The day's review window, open and active, with a line typed and not saved."""
    qtbot.waitUntil(lambda: main.til.review_button.isVisible(), timeout=10_000)
    review = main.til.open_review()
    assert review is not None
    qtbot.waitExposed(review)
    qtbot.waitUntil(lambda: review.editor.toPlainText().startswith("# TIL"), timeout=5_000)
    review.activateWindow()
    qtbot.waitUntil(review.isActiveWindow, timeout=5_000)
    review.editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClick(review.editor, Qt.Key.Key_Return)
    qtbot.keyClicks(review.editor, TYPED)
    assert review.dirty()
    return review


def press_ctrl_q(qtbot: QtBot, main: MainWindow, review: TilReviewWindow) -> None:
    """Ctrl+Q typed in the review window (the main window's Quit answers it in every window of the app)."""
    review.activateWindow()
    qtbot.waitUntil(review.isActiveWindow, timeout=5_000)
    qtbot.keyClick(review.editor, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def tray_quit(_qtbot: QtBot, main: MainWindow, _review: TilReviewWindow) -> None:
    main.tray.quit_action.trigger()


def close_button(_qtbot: QtBot, main: MainWindow, _review: TilReviewWindow) -> None:
    main.close()  # the main window's close button


def visible_windows() -> list[QWidget]:
    return [widget for widget in QApplication.topLevelWidgets() if widget.isVisible()]


@pytest.mark.parametrize("quit_app", [press_ctrl_q, tray_quit, close_button])
def test_quit_asks_once_and_discard_closes_every_window(
    qtbot: QtBot, main: MainWindow, live_context: AppContext, quit_app: Callable[..., None]
) -> None:
    review = dirty_review(qtbot, main)
    qtbot.waitUntil(review.draft_path.exists, timeout=5_000)  # the typing is kept on disk meanwhile
    with MessageBoxAnswers(DISCARD) as answers, qtbot.waitSignal(main.shut_down, timeout=10_000):
        quit_app(qtbot, main, review)
    assert len(answers.asked) == 1  # once, for every window
    assert review.local_date in answers.asked[0]
    assert not main.isVisible()
    assert not review.isVisible()
    assert visible_windows() == []  # so the app's last window has closed: it quits
    lock = live_context.app.backend.lock
    assert lock is not None
    assert not lock.held  # the runner stopped, the data directory is free
    assert not review.draft_path.exists()  # discarded: not offered back next time


def test_quit_with_a_clean_review_window_asks_nothing_and_closes_it(qtbot: QtBot, main: MainWindow) -> None:
    qtbot.waitUntil(lambda: main.til.review_button.isVisible(), timeout=10_000)
    review = main.til.open_review()
    assert review is not None
    qtbot.waitExposed(review)
    with MessageBoxAnswers(CANCEL) as answers, qtbot.waitSignal(main.shut_down, timeout=10_000):
        press_ctrl_q(qtbot, main, review)
    assert answers.asked == []
    assert visible_windows() == []


def test_cancel_keeps_both_windows_and_the_edits(qtbot: QtBot, main: MainWindow, live_context: AppContext) -> None:
    review = dirty_review(qtbot, main)
    shut_down: list[bool] = []
    main.shut_down.connect(lambda: shut_down.append(True))
    with MessageBoxAnswers(CANCEL) as answers:
        press_ctrl_q(qtbot, main, review)
        qtbot.waitUntil(lambda: len(answers.asked) == 1, timeout=5_000)
    assert main.isVisible()
    assert review.isVisible()
    assert review.editor.toPlainText().endswith(TYPED)
    assert shut_down == []
    live_context.ops.run(lambda: None)  # the app still works: the runner and background work run
    assert live_context.ops.busy
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    with MessageBoxAnswers(DISCARD) as again, qtbot.waitSignal(main.shut_down, timeout=10_000):
        press_ctrl_q(qtbot, main, review)  # and quitting later asks again, once
    assert len(again.asked) == 1


def test_save_saves_the_edits_then_quits(qtbot: QtBot, main: MainWindow, live_context: AppContext) -> None:
    review = dirty_review(qtbot, main)
    app = live_context.app
    with MessageBoxAnswers(SAVE) as answers, qtbot.waitSignal(main.shut_down, timeout=10_000):
        press_ctrl_q(qtbot, main, review)
    assert len(answers.asked) == 1
    assert visible_windows() == []
    with open_app(app.data_dir, kind="cli", lock=False, log_to_stderr=False) as reopened:
        view = reopened.til.get(review.local_date)
    assert [version.kind for version in view.versions] == [TilVersionKind.GENERATED, TilVersionKind.EDITED]
    assert (view.markdown or "").endswith(TYPED)


def test_the_app_ends_when_quit_with_a_dirty_review_window(qapp: QApplication, data_dir: Path) -> None:
    """Through the entry point, as a user runs it: the event loop ends (the app's quit signal fires)."""
    with open_app(data_dir, kind="gui", log_to_stderr=False) as san:
        finished_til(san)
    fired: list[str] = []
    qapp.lastWindowClosed.connect(lambda: fired.append("lastWindowClosed"))
    qapp.aboutToQuit.connect(lambda: fired.append("aboutToQuit"))
    user = _User()
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(lambda: qapp.exit(3))  # a bound that only proves the loop ends
    guard.start(60_000)
    try:
        with MessageBoxAnswers(DISCARD) as answers:
            user.start()
            code = entry.main(["san-desktop", "--data-dir", str(data_dir)])
    finally:
        guard.stop()
        user.stop()
        qapp.lastWindowClosed.disconnect()
        qapp.aboutToQuit.disconnect()
    assert code == 0
    assert user.pressed
    assert len(answers.asked) == 1
    assert fired == ["lastWindowClosed", "aboutToQuit"]
    assert visible_windows() == []
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, MainWindow | TilReviewWindow):
            widget.deleteLater()


class _User:
    """Once the main window is up: opens the TIL's review window, types there, and presses Ctrl+Q in it."""

    def __init__(self) -> None:
        self.pressed = False
        self.review: TilReviewWindow | None = None
        self._timer = QTimer()
        self._timer.setInterval(20)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_timer_timeout(self) -> None:
        from PySide6.QtTest import QTest

        mains = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not mains:
            return
        main = mains[0]
        if self.review is None:
            main.show_page("til")
            if main.til.review_button.isVisible():
                self.review = main.til.open_review()
            return
        review = self.review
        if not review.isActiveWindow():
            review.activateWindow()
            return
        if not review.dirty():
            if review.editor.toPlainText().startswith("# TIL"):  # its text is shown: type below it
                review.editor.moveCursor(QTextCursor.MoveOperation.End)
                QTest.keyClicks(review.editor, TYPED)
            return
        self._timer.stop()
        self.pressed = True
        QTest.keyClick(review.editor, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_the_tray_quits_while_settings_are_open(qtbot: QtBot, main: MainWindow) -> None:
    seen: list[bool] = []

    def quit_from_the_tray() -> None:  # while the modal Settings dialog runs its own loop
        seen.append(main.settings_dialog is not None and main.settings_dialog.isVisible())
        main.tray.quit_action.trigger()

    QTimer.singleShot(0, quit_from_the_tray)
    with qtbot.waitSignal(main.shut_down, timeout=10_000):
        main.open_settings()  # returns once quitting has closed it
    assert seen == [True]
    assert visible_windows() == []
