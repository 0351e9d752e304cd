"""The app as a user installs it: a wheel built from this checkout, installed into a fresh virtual
environment and run from outside the source tree, must be whole — every subpackage present, NOTICE (the
shipped model and its license) among its license files, the database migrated from the shipped scripts, a
scrap turned into a card by the installed command line and embedded by the sentence encoder."""

from __future__ import annotations

import json
import os
import shutil
import sysconfig
import venv
from pathlib import Path

import pytest

from san_desktop import __version__
from san_desktop.ai.calibration import SEMANTIC_EMBEDDING_MODEL
from san_desktop.db.migrate import head_revision
from tests.support.processes import child_env, run_python

REPO = Path(__file__).resolve().parents[2]

# The PEP 517 build a build frontend would run (its warnings are printed, not hidden by pip).
BUILD_WHEEL = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"

# Runs in the fresh environment: every requirement of the installed distribution is satisfied, and every
# package the checkout has is importable from the installed copy (none from the checkout).
CHECK = """
import importlib, json, sys
from importlib.metadata import distribution, version
from pathlib import Path
from packaging.requirements import Requirement

expected = json.loads(sys.argv[1])
unmet = []
for text in distribution("san-desktop").requires or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        found = version(req.name)
    except Exception:
        unmet.append(text)
        continue
    if not req.specifier.contains(found, prereleases=True):
        unmet.append(f"{text} (found {found})")
imported, missing = {}, {}
for name in expected:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        missing[name] = f"{type(exc).__name__}: {exc}"
    else:
        imported[name] = str(Path(next(iter(module.__path__))))
print(json.dumps({"unmet": unmet, "imported": imported, "missing": missing}))
"""

# Runs in the fresh environment: the license files the installed distribution names, and their text.
LICENSE_FILES = """
import json
from importlib.metadata import distribution

dist = distribution("san-desktop")
texts = {f.name: f.read_text() for f in dist.files or [] if f.parts[0].endswith(".dist-info") and "licenses" in f.parts}
print(json.dumps({"named": dist.metadata.get_all("License-File") or [], "texts": texts}))
"""


def _checkout_packages() -> dict[str, Path]:
    """Every package of the checkout by import name (folders holding Python files), mapped folders too."""
    roots = {"san_desktop": REPO / "san_desktop", "san_desktop.migrations": REPO / "migrations"}
    found: dict[str, Path] = {}
    for name, root in roots.items():
        for folder in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
            if folder.name == "__pycache__" or not any(folder.glob("*.py")):
                continue
            relative = folder.relative_to(root).parts
            found[".".join((name, *relative))] = folder
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout installed into a new virtual environment; returns its bin folder.

    The environment gets the test environment's third-party packages through a path file, so the test
    needs no network and installs no second copy of Qt; the app itself comes only from the wheel.
    """
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__"))
    built = run_python(["-c", BUILD_WHEEL, str(work)], cwd=source, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    # setuptools warns when a folder with files is not among the packages (a hand-kept list went stale)
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    (wheel,) = work.glob("san_desktop-*.whl")

    env_dir = work / "venv"
    venv.create(env_dir, with_pip=False, symlinks=os.name != "nt")
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    fresh_site = run_python(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], python=str(python))
    assert fresh_site.returncode == 0, fresh_site.stderr
    # third-party packages of this environment, appended after the fresh site-packages (a plain path line:
    # the editable install's finder in that folder is not activated)
    Path(fresh_site.stdout.strip(), "test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip_install = ["-m", "pip", "--python", str(python), "install", "--quiet", "--no-index", "--no-deps"]
    install = run_python(
        [*pip_install, "--force-reinstall", str(wheel)],
        cwd=work,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    return bin_dir


def _run(bin_dir: Path, cwd: Path, program: str, *args: str) -> str:
    result = run_python(
        list(args),
        python=str(bin_dir / program),
        cwd=cwd,  # outside the checkout: only the installed copy can be imported
        env=child_env(PYTHONSAFEPATH="1", PYTHONPATH="", SAN_DATA_DIR=str(cwd / "data")),
        timeout=180,
    )
    assert result.returncode == 0, f"{program} {' '.join(args)}: {result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.slow
def test_every_package_of_the_checkout_is_installed(installed: Path, tmp_path: Path) -> None:
    expected = _checkout_packages()
    assert {"san_desktop.jobs", "san_desktop.ai", "san_desktop.queue", "san_desktop.migrations.versions"} <= set(
        expected
    )
    report = json.loads(_run(installed, tmp_path, "python", "-c", CHECK, json.dumps(sorted(expected))))
    assert report["unmet"] == []
    assert report["missing"] == {}
    for name, where in report["imported"].items():
        assert Path(where).is_relative_to(installed.parent), f"{name}: {where}"
        assert not Path(where).is_relative_to(REPO), f"{name} came from the checkout"


@pytest.mark.slow
def test_the_installed_distribution_carries_the_notice(installed: Path, tmp_path: Path) -> None:
    report = json.loads(_run(installed, tmp_path, "python", "-c", LICENSE_FILES))
    assert "NOTICE" in report["named"]
    assert report["texts"].get("NOTICE") == (REPO / "NOTICE").read_text()
    assert "Universal Sentence Encoder multilingual v3" in report["texts"]["NOTICE"]


@pytest.mark.slow
def test_installed_command_line_turns_a_scrap_into_a_card(installed: Path, tmp_path: Path) -> None:
    assert _run(installed, tmp_path, "san", "--version").strip() == f"san {__version__}"

    added = _run(
        installed, tmp_path, "san", "scrap", "add", "--text", "SQLite WAL mode lets readers work beside a writer."
    )
    assert "scrap" in added.lower()
    doctor = json.loads(_run(installed, tmp_path, "san", "doctor", "--json"))
    assert doctor["database_revision"] == head_revision()
    assert str(doctor["sqlite_vec_version"]).startswith("v")

    _run(installed, tmp_path, "san", "jobs", "run", "--until-idle", "--timeout", "120")
    cards = json.loads(_run(installed, tmp_path, "san", "cards", "list", "--json"))
    assert len(cards) == 1
    assert "WAL" in cards[0]["summary"] or "WAL" in cards[0]["title"]
    shown = json.loads(_run(installed, tmp_path, "san", "cards", "show", cards[0]["id"], "--json"))
    assert shown["embedding_model"] == SEMANTIC_EMBEDDING_MODEL  # the encoder the wheel depends on, loaded
