"""Modal dialogs in GUI tests: a dialog opened with ``exec()`` blocks the test until it closes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget


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
