"""The app must migrate its database from a regular (non-editable) install, not only from a checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from san_desktop.db.migrate import head_revision
from tests.support.processes import child_env, run_python

REPO = Path(__file__).resolve().parents[2]

CHECK = """
import json, sys
from pathlib import Path
import san_desktop, san_desktop.migrations, san_desktop.resources
from san_desktop.db.database import open_database
from importlib.resources import files
db = open_database(Path(sys.argv[1]))
print(json.dumps({
    "package": san_desktop.__file__,
    "migrations": san_desktop.migrations.__file__,
    "icon": (files("san_desktop.resources") / "icons" / "san.svg").is_file(),
    "revision": db.migration.head,
    "previous": db.migration.previous,
}))
db.dispose()
"""


@pytest.mark.slow
def test_installed_package_migrates_a_database(tmp_path: Path) -> None:
    target = tmp_path / "site"
    install = run_python(
        [
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(REPO),
        ],
        cwd=tmp_path,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    assert (target / "san_desktop" / "migrations" / "env.py").is_file()
    assert (target / "san_desktop" / "migrations" / "script.py.mako").is_file()

    result = run_python(
        ["-c", CHECK, str(tmp_path / "fresh.db")],
        cwd=tmp_path,  # not the checkout: only the installed copy can be imported as san_desktop
        env=child_env(PYTHONPATH=str(target), PYTHONSAFEPATH="1"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert Path(report["package"]).is_relative_to(target)
    assert Path(report["migrations"]).is_relative_to(target)
    assert report["icon"] is True
    assert report["revision"] == head_revision()
    assert report["previous"] is None
