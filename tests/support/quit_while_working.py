"""The app as a person starts it (``san-desktop``), whose main window is closed the way a person closes it once a
file appears (the test makes it while the AI server holds the app's requests), for the quit tests.

    python -m tests.support.quit_while_working DATA_DIR CLOSE_FILE

Prints "closing" just before it closes the window; the entry point's exit code is the process's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from san_desktop import __main__ as entry
from san_desktop.ui.main_window import MainWindow


def main(argv: list[str]) -> int:
    data_dir, close_file = argv[1], Path(argv[2])
    app = QApplication(["san-desktop"])  # (the entry point takes this one)

    def look() -> None:
        mains = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if mains and close_file.exists():
            timer.stop()
            print("closing", flush=True)
            mains[0].close()  # the window's close button

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(20)
    code = entry.main(["san-desktop", "--data-dir", data_dir])
    del app
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
