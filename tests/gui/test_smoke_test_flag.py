"""``san-desktop --smoke-test``: what packaging/smoke_test.sh asks of the bundle, on the source tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from san_desktop import __main__ as entry
from san_desktop.db.migrate import head_revision
from san_desktop.ui.main_window import MainWindow
from tests.support.db import library_revision
from tests.support.processes import run_python


def test_smoke_test_opens_the_window_on_a_fresh_data_directory_and_exits_0(data_dir: Path) -> None:
    result = run_python(["-m", "san_desktop", "--smoke-test", "--data-dir", str(data_dir)], timeout=120)

    assert result.returncode == 0, result.stderr
    assert "shown and settled; closing" in result.stdout  # the window was built and shown, not skipped
    assert library_revision(data_dir) == head_revision()


def test_smoke_test_fails_when_start_up_does_not_settle_in_time(
    qapp: QApplication, data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(entry, "SMOKE_TEST_SECONDS", 0.0)  # over before the first poll can call it settled

    assert entry.main(["san-desktop", "--smoke-test", "--data-dir", str(data_dir)]) == 1

    assert "san-desktop --smoke-test: still waiting for" in capsys.readouterr().err
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    assert windows
    assert not any(w.isVisible() for w in windows)
    for window in windows:
        window.deleteLater()


def test_smoke_test_is_not_in_the_help() -> None:
    result = run_python(["-m", "san_desktop", "--help"], timeout=60)

    assert result.returncode == 0
    assert "--data-dir" in result.stdout
    assert "smoke" not in result.stdout
