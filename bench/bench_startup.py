"""Command line start-up: `san --version` and `san scrap add` wall time (median of runs), beside
`python -c pass` as the floor."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import Row, at_most, median, temporary_data_dir


def _wall(args: list[str], env: dict[str, str], runs: int = 7) -> float:
    return _walls([args], env, runs)[0]


def _walls(commands: list[list[str]], env: dict[str, str], runs: int = 7) -> list[float]:
    """Median wall time of each command, run in turn ``runs`` times (alternately, so a busy moment of
    the machine falls on all of them alike)."""
    # as on a person's machine: Python keeps the modules' bytecode after the first run (this machine's
    # environment sets PYTHONDONTWRITEBYTECODE, which would compile every module from source at every start)
    env = {key: value for key, value in env.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for args in commands:  # (the first run writes the bytecode; not counted)
        extra = [f"--text=startup bench warm-up {time.time()}"] if args[-1] == "add" else []
        subprocess.run([*args, *extra], env=env, capture_output=True, check=True)
    times: list[list[float]] = [[] for _ in commands]
    for n in range(runs):
        for index, args in enumerate(commands):
            extra = [f"--text=startup bench {n} {time.time()}"] if args[-1] == "add" else []
            start = time.perf_counter()
            subprocess.run([*args, *extra], env=env, capture_output=True, check=True)
            times[index].append((time.perf_counter() - start) * 1000)
    return [median(each) for each in times]


WINDOW = """
import os
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from san_desktop.__main__ import main
app = QApplication(sys.argv[:1])  # main() uses it
def painted():  # the first thing the event loop of main() does, once main() has built and shown the window
    window = next(w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow" and w.isVisible())
    window.grab()
    os._exit(0)  # the bench measures the start, not the shutdown
QTimer.singleShot(0, painted)
sys.exit(main(["san-desktop", "--data-dir", sys.argv[1]]))
"""


def bench_large_library(count: int = 50_000, runs: int = 5) -> list[Row]:
    """On a database of ``count`` scraps with cards and embeddings: `san scrap add` wall time (SQLite's
    integrity check reads the whole file), and wall time from starting the process to the main window's
    first painted frame (``san-desktop``'s own ``main()``, stopped when its event loop starts)."""
    import numpy as np

    from bench.bench_cards import _bulk_cards, _bulk_scraps
    from san_desktop.bootstrap import start_backend

    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        vectors = np.random.default_rng(5).standard_normal((count, 512)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with backend.db.engine.begin() as conn:  # one bulk write, no other writer
            _bulk_cards(conn, _bulk_scraps(conn, count, "window"), "m", vectors=vectors)
        backend.close()
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SAN_DATA_DIR": str(directory)}
        add = _wall([sys.executable, "-m", "san_desktop.cli.main", "scrap", "add"], env)
        shown = _wall([sys.executable, "-c", WINDOW, str(directory)], env, runs)
    return [
        Row(
            f"`san scrap add --text ...` wall time, {count:,} cards, median",
            add,
            "ms",
            "the database's integrity check runs while the modules load",
            target=at_most(350),
        ),
        Row(
            f"window first frame, {count:,} cards",
            shown,
            "ms",
            "wall time of a process that exits at its first painted frame",
            target=at_most(1000),
        ),
    ]


def bench_commands() -> list[Row]:
    """`san --version` and `san scrap add --text` on a fresh library, alternately with `python -c pass`."""
    with temporary_data_dir() as directory:
        env = {**os.environ, "SAN_DATA_DIR": str(directory)}
        san = [sys.executable, "-m", "san_desktop.cli.main"]
        subprocess.run([*san, "scrap", "list"], env=env, capture_output=True, check=True)  # the database exists
        floor, version, add = _walls([[sys.executable, "-c", "pass"], [*san, "--version"], [*san, "scrap", "add"]], env)
    return [
        Row("`san --version` wall time, median", version, "ms", "", floor, "`python -c pass`", at_most(150)),
        Row("`san scrap add --text ...` wall time, median", add, "ms", "", floor, "`python -c pass`", at_most(350)),
    ]


def run_all() -> list[Row]:
    return bench_commands() + bench_large_library()
