"""``san-desktop``: data directory → database (checked, migrated) → facade → main window → job runner."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from san_desktop import APP_ID, APP_NAME, __version__

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication, QMainWindow

    from san_desktop.ui.common.context import AppContext

SMOKE_TEST_SECONDS = 60.0  # --smoke-test gives up (exit 1) when start-up has not settled by then


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="san-desktop", description=f"{APP_NAME}")
    parser.add_argument("--version", action="version", version=f"san-desktop {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $SAN_DATA_DIR or the platform's)")
    # --smoke-test (hidden from --help; packaging/smoke_test.sh runs it on the built bundle, and
    # tests/gui/test_smoke_test_flag.py on the source tree): start as usual, wait until the main window is
    # shown, the runner's first recovery sweep is done and no background operation runs, then close the
    # window and exit 0. Exit 1 if that has not happened within SMOKE_TEST_SECONDS, or if the window icon
    # cannot be drawn (a bundle without Qt's SVG plugins).
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    # Qt's own options (-platform, -style...) pass through to QApplication.
    args, _qt_args = parser.parse_known_args(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv if argv is None else argv)
    args = parse_args(arguments[1:])

    from san_desktop.db.backends.sqlite.integrity import start_integrity_check

    # SQLite reads every page of the database for its integrity check (a fifth of a second at 50,000
    # cards) without holding the GIL, so it runs while the window's modules are imported; start_backend
    # waits for its verdict before anything writes.
    integrity = start_integrity_check(args.data_dir)

    from PySide6.QtWidgets import QApplication

    from san_desktop.app import SanApp
    from san_desktop.bootstrap import start_backend
    from san_desktop.core.errors import SanError
    from san_desktop.ui.common.context import build_context, freeze_startup_objects
    from san_desktop.ui.common.resources import app_icon
    from san_desktop.ui.main_window import MainWindow
    from san_desktop.ui.window.crash_dialog import install_excepthook, show_known_error

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(arguments)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())

    try:
        san = SanApp(start_backend(args.data_dir, kind="gui", integrity=integrity))
    except SanError as exc:
        show_known_error(str(exc))
        return exc.exit_code

    install_excepthook()
    context = build_context(san, ai_in_own_process=True)
    # The pages' first reads wait, with the runner's sweep, the sentence encoder and the similar-card
    # index, until the window's first frame is on screen.
    context.ops.hold()
    window = MainWindow(context)
    window.first_frame.connect(context.start)
    window.show()
    freeze_startup_objects()
    smoke_test = _SmokeTest(app, window, context) if args.smoke_test else None
    if smoke_test is not None:
        smoke_test.start()
    code = 1
    try:
        code = app.exec()
        code = code if smoke_test is None else smoke_test.exit_code(code)
        return code
    finally:
        if smoke_test is not None:
            smoke_test.stop()
        stopped = context.shutdown()  # (done already when the main window closed)
        san.close()
        if not stopped:
            _end_now(code)


def _end_now(code: int) -> None:
    """End the process at once: a thread that could not be stopped (a call that does not return) would keep it
    alive, as Qt's thread pools wait for their threads when they are destroyed. Its jobs were given back to the
    queue, and the session recorded as ended, before this."""
    import logging

    from san_desktop.core.logging_setup import exit_at_once

    logging.getLogger(__name__).warning("Background work was still running after the quit; ending the process now")
    exit_at_once(code)


class _SmokeTest:
    """``--smoke-test``: polls until start-up has settled, then closes the window the way a user does (the
    app quits when its last window closes) and says which exit code ``main`` returns."""

    POLL_MS = 50
    SETTLED_POLLS = 4  # settled on this many polls in a row: a page's first load may start a second one
    QUIT_SECONDS = 10.0  # after closing the window, the event loop must end within this

    def __init__(self, app: QApplication, window: QMainWindow, context: AppContext) -> None:
        from PySide6.QtCore import QTimer

        self._app = app
        self._window = window
        self._context = context
        self._deadline = time.monotonic() + SMOKE_TEST_SECONDS
        self._settled_polls = 0
        self._result: int | None = None  # set when the window is closed
        self._timer = QTimer()
        self._timer.setInterval(self.POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def exit_code(self, loop_code: int) -> int:
        """What ``main`` returns once the event loop has ended with ``loop_code``."""
        if self._result is None:
            print("san-desktop --smoke-test: the app quit before start-up had settled", file=sys.stderr)
            return loop_code or 1
        return loop_code or self._result

    def _waiting_for(self) -> list[str]:
        handle = self._window.windowHandle()
        waiting = []
        if not self._window.isVisible() or handle is None or not handle.isExposed():
            waiting.append("the main window to be shown")
        if not self._context.runner.started:
            waiting.append("the job runner's recovery sweep")
        if self._context.ops.busy:
            waiting.append("background operations")
        return waiting

    def _on_timer_timeout(self) -> None:
        if self._result is not None:  # closed: the app should be quitting
            if time.monotonic() > self._deadline:
                print("san-desktop --smoke-test: the window closed but the app did not quit", file=sys.stderr)
                self._result = 1
                self._app.exit(1)
            return
        waiting = self._waiting_for()
        self._settled_polls = 0 if waiting else self._settled_polls + 1
        if self._settled_polls >= self.SETTLED_POLLS:
            if self._context.ai_failure is not None:  # (a bundle whose executable cannot start its child)
                print(f"san-desktop --smoke-test: {self._context.ai_failure}", file=sys.stderr)
                self._close(1)
                return
            if self._app.windowIcon().pixmap(32, 32).isNull():
                print("san-desktop --smoke-test: the window icon cannot be drawn", file=sys.stderr)
                self._close(1)
                return
            print(f"san-desktop --smoke-test: {self._window.windowTitle()!r} shown and settled; closing")
            self._close(0)
        elif time.monotonic() > self._deadline:
            what = ", ".join(waiting) or "start-up to settle"
            print(f"san-desktop --smoke-test: still waiting for {what}", file=sys.stderr)
            self._close(1)

    def _close(self, result: int) -> None:
        # No QApplication.exit() here: closing the last window already asks the app to quit, and a second
        # request would stay queued after the loop ended (a test calling main() would meet it later).
        self._result = result
        self._deadline = time.monotonic() + self.QUIT_SECONDS
        self._window.close()
        if self._window.isVisible():
            print("san-desktop --smoke-test: the main window refused to close", file=sys.stderr)
            self._result = 1
            self._app.exit(1)


if __name__ == "__main__":
    sys.exit(main())
