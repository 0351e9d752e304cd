from __future__ import annotations

from pathlib import Path

import pytest

from san_desktop.core.errors import DataDirectoryError
from san_desktop.core.paths import ensure_data_dir, resolve_data_dir


def test_explicit_data_dir_wins_over_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAN_DATA_DIR", str(tmp_path / "from-env"))
    assert resolve_data_dir(tmp_path / "explicit") == (tmp_path / "explicit").resolve()
    assert resolve_data_dir(None) == (tmp_path / "from-env").resolve()


def test_platform_default_without_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SAN_DATA_DIR")
    # conftest points XDG_DATA_HOME into tmp_path, so even the default stays inside the test's directory
    assert resolve_data_dir(None).is_relative_to(tmp_path)
    assert resolve_data_dir(None).name == "san-desktop"


def test_ensure_data_dir_creates_it_with_a_log_folder(tmp_path: Path) -> None:
    target = ensure_data_dir(tmp_path / "a" / "b")
    assert (target / "logs").is_dir()


def test_unusable_data_dir_gets_a_clear_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DataDirectoryError, match="Cannot create the data directory"):
        ensure_data_dir(blocker / "data")
