"""Unexpected errors (bugs): logged with their traceback and shown with a "Copy details" button."""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from san_desktop import APP_NAME, __version__
from san_desktop.core.errors import SanError

log = logging.getLogger(__name__)

HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal"})


def has_screen() -> bool:
    """False on Qt's offscreen/minimal platforms, where nobody could answer a modal dialog."""
    return QGuiApplication.platformName() not in HEADLESS_PLATFORMS


def show_known_error(message: str, parent: QWidget | None = None, title: str = APP_NAME) -> None:
    print(f"{title}: {message}", file=sys.stderr)
    if QApplication.instance() is not None and has_screen():
        QMessageBox.critical(parent, title, message)


def _show_crash(details: str) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Critical,
        f"{APP_NAME} — unexpected error",
        "Something went wrong inside SAN Desktop. Your data is safe in the database; "
        "the details below are in the log file too.",
    )
    box.setDetailedText(details)
    copy = box.addButton("Copy details", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Close)
    box.exec()
    if box.clickedButton() is copy:
        QGuiApplication.clipboard().setText(details)


def excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if isinstance(exc, SanError):
        log.warning("%s", exc)
        show_known_error(str(exc))
        return
    details = f"{APP_NAME} {__version__}\n" + "".join(traceback.format_exception(exc_type, exc, tb))
    log.error("Unexpected error:\n%s", details)
    if QApplication.instance() is not None and has_screen():
        _show_crash(details)


def install_excepthook() -> None:
    sys.excepthook = excepthook
