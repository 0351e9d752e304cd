"""Issue 38, item 15: every window and dialog fits a 1366×768 screen (the Settings dialog was 914–990 px tall,
its Save and Cancel off a 900-px screen), and the list of them is found in the package, not kept by hand."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from PySide6.QtWidgets import QDialog, QMainWindow, QMessageBox, QWidget

import san_desktop.ui
from tests.gui.screen_fit_cases import OPENERS, PARTS, name_of
from tests.support.processes import child_env, run_python

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).with_name("screen_fit_cases.py")


def widget_classes() -> set[type[QWidget]]:
    """Every QWidget subclass defined in ``san_desktop.ui`` (each of its modules imported). A QMessageBox
    sizes itself to its screen: such confirmations need no entry."""
    found: set[type[QWidget]] = set()
    for module in pkgutil.walk_packages(san_desktop.ui.__path__, f"{san_desktop.ui.__name__}."):
        imported = importlib.import_module(module.name)
        for _name, value in inspect.getmembers(imported, inspect.isclass):
            mine = value.__module__ == imported.__name__
            if mine and issubclass(value, QWidget) and not issubclass(value, QMessageBox):
                found.add(value)
    return found


def test_every_window_and_dialog_of_the_package_has_a_way_to_open_it() -> None:
    found = widget_classes()
    listed = set(OPENERS) | set(PARTS)
    missing = sorted(name_of(cls) for cls in found - listed)
    assert missing == [], f"add these to OPENERS (a window or dialog) or PARTS (inside one) of {CASES.name}"
    assert sorted(name_of(cls) for cls in listed - found) == []  # none left that the package no longer has
    assert not set(OPENERS) & set(PARTS)
    assert all(container in OPENERS for container in PARTS.values())
    assert not [cls for cls in PARTS if issubclass(cls, (QDialog, QMainWindow))]  # those are windows of their own


def test_every_window_and_dialog_fits_a_1366x768_screen() -> None:
    env = child_env()
    env.pop("SAN_TEST_DATABASE", None)  # where the library is does not change a window's size
    result = run_python(
        [
            "-m",
            "pytest",
            str(CASES.relative_to(ROOT)),
            "-q",
            "--tb=short",
            "--show-capture=no",
            "-p",
            "no:cacheprovider",
        ],
        cwd=ROOT,
        env=env,
        timeout=280,
    )
    report = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed is not None, report
    assert int(passed.group(1)) == len(OPENERS), report
