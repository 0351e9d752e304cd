"""Unexpected errors (bugs): logged with their traceback and shown with a "Copy details" button.

An error may be raised on any thread (a job's, a background operation's, a plain Python thread's); only the
GUI thread shows it: a message box made on another thread is a blank window nobody can close. Once the app is
closing, errors are logged and not shown (a dialog would hold the quit up, or open after the window is gone).
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from san_desktop import APP_NAME, __version__
from san_desktop.core.errors import SanError

log = logging.getLogger(__name__)

HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal"})
BUG = "bug"
KNOWN = "known"

_reporter: _Reporter | None = None  # made on the GUI thread (``install_excepthook``, or its first report there)
_closing = False  # the app is closing (``app_closing``): errors are logged, not shown


def has_screen() -> bool:
    """False on Qt's offscreen/minimal platforms, where nobody could answer a modal dialog."""
    return QGuiApplication.platformName() not in HEADLESS_PLATFORMS


def show_known_error(message: str, parent: QWidget | None = None, title: str = APP_NAME) -> None:
    """On the GUI thread (``excepthook`` brings other threads' errors there)."""
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


class _Reporter(QObject):
    """Lives on the GUI thread and shows there what any thread reports.

    Signals:
        reported(str, str): ``BUG`` and a bug's details, or ``KNOWN`` and an expected failure's sentence; emitted
            on any thread, received on the GUI thread (queued from another thread).
    """

    reported = Signal(str, str)

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__()
        self.reported.connect(self._on_reported)
        app.aboutToQuit.connect(app_closing)

    @Slot(str, str)
    def _on_reported(self, kind: str, text: str) -> None:
        if _closing or QCoreApplication.closingDown():
            log.info("Not shown: the app is closing (the error is in the log above)")
            return
        if kind == KNOWN:
            show_known_error(text)
        elif has_screen():
            _show_crash(text)


def _on_gui_thread(app: QCoreApplication) -> bool:
    return QThread.currentThread() == app.thread()


def _report(kind: str, text: str) -> None:
    """Show ``text`` on the GUI thread, whichever thread reports it."""
    global _reporter
    app = QApplication.instance()
    if app is None:
        return
    if _reporter is None and _on_gui_thread(app):
        _reporter = _Reporter(app)
    if _reporter is None:
        log.info("Not shown: reported off the GUI thread before the app could show errors")
        return
    try:
        _reporter.reported.emit(kind, text)
    except RuntimeError:  # the reporter was deleted with the application (the process is ending)
        log.info("Not shown: the app has closed")


def excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """``sys.excepthook``: on any thread."""
    if isinstance(exc, SanError):
        log.warning("%s", exc)
        _report(KNOWN, str(exc))
        return
    details = f"{APP_NAME} {__version__}\n" + "".join(traceback.format_exception(exc_type, exc, tb))
    log.error("Unexpected error:\n%s", details)
    _report(BUG, details)


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    """``threading.excepthook``: what a Python thread's target raised (its default only prints it)."""
    if args.exc_type is SystemExit:
        return  # a thread that ended itself, as the default hook has it
    exc = args.exc_value if args.exc_value is not None else args.exc_type()
    excepthook(args.exc_type, exc, args.exc_traceback)


def app_closing() -> None:
    """The app is closing (its main window closed, or the event loop is ending): from now on errors are logged,
    not shown."""
    global _closing
    _closing = True


def install_excepthook() -> None:
    """On the GUI thread, once the application exists: errors raised on any thread reach the log and, on the GUI
    thread, the person."""
    global _reporter
    app = QApplication.instance()
    if app is not None and _reporter is None:
        _reporter = _Reporter(app)
    sys.excepthook = excepthook
    threading.excepthook = _thread_excepthook
