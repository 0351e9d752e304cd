"""Screenshots of every page of the main window, with a day of scraps on a fresh data directory, in the light
or dark palette at 1400×900 and 1024×700; ``--readme`` writes the README's picture (docs/main-window.png).

Run under a virtual display, once per palette (a palette is chosen before the window is made, as a system's
is):

    xvfb-run -a .venv/bin/python docs/screenshots.py --palette light --out /tmp/shots
    xvfb-run -a .venv/bin/python docs/screenshots.py --palette dark --out /tmp/shots
    xvfb-run -a .venv/bin/python docs/screenshots.py --readme

Nothing touches the user's data or keyring: the data directory is a new temporary one and the keyring the
null backend.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ((1400, 900), (1024, 700))
SCRAPS = (
    "# SQLite WAL mode\n\nIn WAL mode SQLite appends changes to a write-ahead log instead of rewriting the "
    "database file. Readers keep reading the last committed snapshot while a writer appends. A checkpoint "
    "copies the pages back into the database file; PRAGMA wal_checkpoint(TRUNCATE) also empties the log.",
    "Raft elects a leader that accepts every write and replicates its log to the followers. A follower that "
    "hears nothing for an election timeout becomes a candidate and asks for votes; randomised timeouts make "
    "split votes rare.",
    "React's useEffect runs after the render is committed to the DOM. List every reactive value in the "
    "dependency array, and return a cleanup function that removes listeners or aborts pending fetches.",
    "Property-based testing with Hypothesis generates many inputs for one test and shrinks a failing input "
    "to the smallest example. Write properties such as round trips: decode(encode(x)) == x.",
    "트랜잭션 격리 수준이 REPEATABLE READ면 트랜잭션은 첫 읽기 시점의 스냅샷을 본다. PostgreSQL에서는 같은 행을 "
    "동시에 고치면 직렬화 오류가 나므로 애플리케이션이 다시 시도해야 한다.",
    "CSRF works because the browser attaches cookies to cross-site requests. SameSite=Lax cookies are not sent "
    "on cross-site POSTs, and a CSRF token ties each form to the session that rendered it.",
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--palette", choices=("light", "dark"), default="light")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "san-screenshots")
    parser.add_argument("--readme", action="store_true", help=f"write {HERE / 'main-window.png'} only")
    args = parser.parse_args(argv)
    os.environ["SAN_DATA_DIR"] = tempfile.mkdtemp(prefix="san-screenshots-")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from san_desktop.app import SanApp
    from san_desktop.bootstrap import start_backend
    from san_desktop.ui.common.context import build_context
    from san_desktop.ui.main_window import PAGES, MainWindow

    qt = QApplication(sys.argv[:1])
    qt.setStyle("Fusion")
    if args.palette == "dark":
        qt.setPalette(dark_palette())

    def wait(condition: Callable[[], bool], seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while not condition() and time.monotonic() < deadline:
            loop = QEventLoop()
            QTimer.singleShot(100, loop.quit)
            loop.exec()

    san = SanApp(start_backend(None, kind="gui", log_to_stderr=False))
    context = build_context(san)
    window = MainWindow(context)
    window.resize(*SIZES[0])
    window.show()
    context.start()
    for text in SCRAPS:
        san.capture_text(text)
    wait(lambda: len(san.cards.list_cards()) == len(SCRAPS))
    day = san.til.today()
    san.generate_til(day)
    wait(lambda: san.til.get(day).markdown is not None)
    san.generate_quizzes(day)
    wait(lambda: bool(san.quizzes.due_counts().total))
    args.out.mkdir(parents=True, exist_ok=True)
    shots = [("inbox", SIZES[0])] if args.readme else [(key, size) for key, *_rest in PAGES for size in SIZES]
    for key, (width, height) in shots:
        window.resize(width, height)
        if key == "trash" and not san.trash.entries():  # the last page: something deleted to show
            san.delete_scrap(san.scraps.list_scraps()[-1].id)
        window.show_page(key)
        if key == "cards":
            window.page(key).open_card(san.cards.list_cards()[-1].id)  # type: ignore[attr-defined]
        wait(lambda: False, 1.0)  # the page's first load and paint
        path = HERE / "main-window.png" if args.readme else args.out / f"{key}-{args.palette}-{width}x{height}.png"
        window.grab().save(str(path))
        print(path)
    window.close()
    context.shutdown()
    san.close()
    return 0


def dark_palette():  # type: ignore[no-untyped-def]
    """A dark palette as a dark desktop theme gives one (Fusion's roles)."""
    from PySide6.QtGui import QColor, QPalette

    palette = QPalette()
    text = QColor(230, 230, 230)
    roles = {
        QPalette.ColorRole.Window: QColor(37, 37, 38),
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: QColor(30, 30, 30),
        QPalette.ColorRole.AlternateBase: QColor(45, 45, 48),
        QPalette.ColorRole.ToolTipBase: QColor(37, 37, 38),
        QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: QColor(50, 50, 52),
        QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.Link: QColor(110, 170, 255),
        QPalette.ColorRole.Highlight: QColor(38, 110, 200),
        QPalette.ColorRole.HighlightedText: QColor(255, 255, 255),
        QPalette.ColorRole.PlaceholderText: QColor(140, 140, 140),
        QPalette.ColorRole.Light: QColor(70, 70, 72),
        QPalette.ColorRole.Midlight: QColor(60, 60, 62),
        QPalette.ColorRole.Mid: QColor(55, 55, 58),
        QPalette.ColorRole.Dark: QColor(20, 20, 20),
    }
    for role, colour in roles.items():
        palette.setColor(role, colour)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(120, 120, 120))
    return palette


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
