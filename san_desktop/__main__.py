"""``san-desktop``: data directory → database (checked, migrated) → facade → job runner → main window."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from san_desktop import APP_ID, APP_NAME, __version__


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="san-desktop", description=f"{APP_NAME}")
    parser.add_argument("--version", action="version", version=f"san-desktop {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $SAN_DATA_DIR or the platform's)")
    # Qt's own options (-platform, -style...) pass through to QApplication.
    args, _qt_args = parser.parse_known_args(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv if argv is None else argv)
    args = parse_args(arguments[1:])

    from PySide6.QtWidgets import QApplication

    from san_desktop.app import SanApp
    from san_desktop.bootstrap import start_backend
    from san_desktop.core.errors import SanError
    from san_desktop.ui.context import build_context, freeze_startup_objects
    from san_desktop.ui.crash_dialog import install_excepthook, show_known_error
    from san_desktop.ui.main_window import MainWindow
    from san_desktop.ui.resources import app_icon

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(arguments)
    app.setApplicationName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())

    try:
        san = SanApp(start_backend(args.data_dir, kind="gui"))
    except SanError as exc:
        show_known_error(str(exc))
        return exc.exit_code

    install_excepthook()
    context = build_context(san)
    window = MainWindow(context)
    window.show()
    context.start()
    freeze_startup_objects()
    try:
        return app.exec()
    finally:
        context.shutdown()
        san.close()


if __name__ == "__main__":
    sys.exit(main())
