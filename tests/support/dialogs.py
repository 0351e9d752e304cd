"""Modal dialogs in GUI tests: a dialog opened with ``exec()`` blocks the test until it closes (or is answered)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget


def close_next_modal(inspect: Callable[[QWidget], None] | None = None) -> list[QWidget | None]:
    """Close the next modal dialog as soon as the event loop runs (looking at it with ``inspect`` first), so
    the ``exec()`` that opened it returns; the returned list then holds what was open (``None``: nothing)."""
    shown: list[QWidget | None] = []

    def close() -> None:
        dialog = QApplication.activeModalWidget()
        shown.append(dialog)
        if dialog is not None:
            if inspect is not None:
                inspect(dialog)
            dialog.close()

    QTimer.singleShot(0, close)
    return shown


class MessageBoxAnswers(QObject):
    """Answers every message box the app asks with, with ``button`` (as a person clicking it), and keeps
    what each one asked; from ``start`` (or ``with``) until ``stop``. The box is looked for whenever the
    event loop runs, so a box opened with ``exec()`` is answered from inside its own loop. No signals."""

    def __init__(self, button: QMessageBox.StandardButton) -> None:
        super().__init__()
        self.button = button
        self.asked: list[str] = []
        self._timer = QTimer(self)
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> MessageBoxAnswers:
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.stop()

    def __enter__(self) -> MessageBoxAnswers:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _on_timer_timeout(self) -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.isVisible():
            self.asked.append(box.text())
            button = box.button(self.button)
            assert button is not None, f"no {self.button} in {box.text()!r}"
            button.click()
