from __future__ import annotations

import json
import shutil
import site
import sysconfig
from pathlib import Path

import pytest

from san_desktop import __version__
from san_desktop.db.migrate import head_revision
from tests.support.db import stdlib_loads_sqlite_vec
from tests.support.processes import child_env, run_python, run_san

DEBIAN_PYTHON = "/usr/bin/python3"


def _doctor(*extra: str, python: str | None = None) -> dict[str, object]:
    if python is None:
        result = run_san("doctor", "--json", *extra)
    else:
        # Another interpreter of the same minor version, with this environment's packages on its path.
        boot = (
            "import site, sys; "
            + "".join(f"site.addsitedir({p!r}); " for p in _site_dirs())
            + "from san_desktop.cli.main import main; sys.exit(main(sys.argv[1:]))"
        )
        result = run_python(["-c", boot, "doctor", "--json", *extra], python=python)
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _site_dirs() -> list[str]:
    return sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()})


def test_version() -> None:
    result = run_san("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"san {__version__}"


def test_doctor_reports_the_installation(data_dir: Path) -> None:
    report = _doctor()
    stdlib_loads = stdlib_loads_sqlite_vec()
    assert report["sqlite_driver"] == ("sqlite3" if stdlib_loads else "sqlean")
    assert report["stdlib_sqlite_loads_extensions"] is stdlib_loads
    assert str(report["sqlite_vec_version"]).startswith("v")
    assert report["data_dir"] == str(data_dir.resolve())
    assert report["database_revision"] is None
    assert report["code_head_revision"] == head_revision()
    assert report["keyring_usable"] is False  # children get the "fail" backend, never the user's keyring
    assert "no keyring backend" in str(report["keyring_message"])
    assert report["embedded_model_loads"] is True
    assert str(report["embedded_model"]).startswith("Universal Sentence Encoder multilingual v3 (Google), Apache-2.0")


def test_doctor_human_output_and_data_dir_option(tmp_path: Path) -> None:
    result = run_san("--data-dir", str(tmp_path / "elsewhere"), "doctor")
    assert result.returncode == 0, result.stderr
    assert "Data directory:" in result.stdout
    assert str((tmp_path / "elsewhere").resolve()) in result.stdout
    assert "sqlite-vec:" in result.stdout
    assert "Embedded model:" in result.stdout


def test_doctor_sees_the_revision_of_an_existing_database(backend: object) -> None:
    assert _doctor()["database_revision"] == head_revision()


def test_doctor_forced_to_sqlean() -> None:
    forced = run_python(["-m", "san_desktop.cli.main", "doctor", "--json"], env=child_env(SAN_SQLITE_DRIVER="sqlean"))
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["sqlite_driver"] == "sqlean"


@pytest.mark.skipif(
    shutil.which(DEBIAN_PYTHON) is None,
    reason="needs a second CPython 3.11 whose sqlite3 can load extensions (Debian's /usr/bin/python3)",
)
def test_doctor_on_a_python_whose_sqlite3_loads_extensions() -> None:
    probe = run_python(
        [
            "-c",
            "import sys, sqlite3; print(sys.version_info[:2] == (3, 11), "
            "hasattr(sqlite3.connect(':memory:'), 'enable_load_extension'))",
        ],
        python=DEBIAN_PYTHON,
    )
    if probe.stdout.split() != ["True", "True"]:
        pytest.skip(f"{DEBIAN_PYTHON} is not a CPython 3.11 with extension loading: {probe.stdout.strip()}")
    report = _doctor(python=DEBIAN_PYTHON)
    assert report["sqlite_driver"] == "sqlite3"
    assert report["stdlib_sqlite_loads_extensions"] is True
    assert str(report["sqlite_vec_version"]).startswith("v")
    assert report["python_executable"] == DEBIAN_PYTHON


def test_unknown_command_is_a_usage_error() -> None:
    result = run_san("frobnicate")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
