"""The ``san-desktop`` entry point: a full start and clean exit, and the refusals at start-up."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from san_desktop.__main__ import main
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.db.backends.sqlite.engine import choose_driver
from san_desktop.db.backends.sqlite.migrate import migrate
from san_desktop.db.migrate import head_revision
from san_desktop.ui.main_window import MainWindow
from tests.support.db import library_revision, raw_connection
from tests.support.processes import run_python


def test_main_starts_on_a_fresh_data_directory_and_exits_cleanly(qtbot: QtBot, data_dir: Path) -> None:
    seen: list[MainWindow] = []
    deadline = time.monotonic() + 60

    def close_main_window() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            if time.monotonic() > deadline:
                QApplication.exit(99)  # no window came: main returns 99 and the assertion below says so
                return
            QTimer.singleShot(10, close_main_window)
            return
        seen.extend(windows)
        windows[0].close()

    QTimer.singleShot(0, close_main_window)
    assert main(["san-desktop", "--data-dir", str(data_dir)]) == 0
    assert len(seen) == 1
    assert library_revision(data_dir) == head_revision()
    with InstanceLock(data_dir) as lock:  # released on exit
        assert lock.held
    for window in seen:
        window.deleteLater()


def test_second_instance_is_refused(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    with InstanceLock(data_dir):
        result = run_python(["-m", "san_desktop", "--data-dir", str(data_dir)], timeout=60)
    assert result.returncode == 3
    assert "already running" in result.stderr
    assert str(data_dir) in result.stderr


@pytest.mark.sqlite  # the data folder's file itself
def test_newer_database_is_refused_at_start(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    migrate(data_dir / "san.db", choose_driver())
    with raw_connection(data_dir / "san.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'abc_newer'")

    result = run_python(["-m", "san_desktop", "--data-dir", str(data_dir)], timeout=60)

    assert result.returncode == 4
    assert "abc_newer" in result.stderr
    assert "update SAN Desktop" in result.stderr


@pytest.mark.sqlite  # the data folder's file itself
def test_corrupt_database_is_refused_at_start(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "san.db").write_bytes(b"\x00\xff" * 5000)
    result = run_python(["-m", "san_desktop", "--data-dir", str(data_dir)], timeout=60)
    assert result.returncode == 4
    assert "is not a SAN Desktop database" in result.stderr
    assert (data_dir / "san.db").read_bytes() == b"\x00\xff" * 5000


AT_FIRST_FRAME = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from san_desktop.__main__ import main
app = QApplication(sys.argv[:1])
def first_turn_of_the_loop():  # the window is shown; what the first frame needed is loaded
    heavy = ("san_desktop.jobs.processors", "numpy", "httpx", "dulwich")
    print(" ".join(name for name in heavy if name in sys.modules) or "none", flush=True)
    for widget in app.topLevelWidgets():
        if type(widget).__name__ == "MainWindow":
            widget.close()
QTimer.singleShot(0, first_turn_of_the_loop)
sys.exit(main(["san-desktop", "--data-dir", sys.argv[1]]))
"""


def test_the_window_is_shown_before_the_job_processors_numpy_httpx_and_dulwich_are_imported(data_dir: Path) -> None:
    """They were a third of the start; the runner's first sweep and the pages' first reads, after the first
    frame, import them off the GUI thread. (A database being made or upgraded imports numpy with its
    migrations: this one is at head already.)"""
    data_dir.mkdir(parents=True)
    migrate(data_dir / "san.db", choose_driver())
    result = run_python(["-c", AT_FIRST_FRAME, str(data_dir)], timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["none"]
