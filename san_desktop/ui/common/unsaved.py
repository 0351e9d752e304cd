"""Unsaved edits in a window of their own (a TIL's review window): the one question about them (Save /
Discard / Cancel), asked when that window closes, and once for every such window when the app quits."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from PySide6.QtWidgets import QMessageBox, QWidget


class Unsaved(enum.Enum):
    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


# (the window asking, what is unsaved: "the TIL of 2026-12-01" each) -> the answer
AskUnsaved = Callable[[QWidget, Sequence[str]], Unsaved]


@runtime_checkable
class KeepsEdits(Protocol):
    """A window whose unsaved edits quitting asks about before it closes the window."""

    def unsaved_edits(self) -> str | None:
        """What is unsaved ("the TIL of 2026-12-01"), or None when nothing is."""

    def save_edits(self, done: Callable[[bool], None]) -> None:
        """Save them off the GUI thread; ``done(True)`` once saved, ``done(False)`` when the save failed (the
        window says why and keeps the edits)."""

    def discard_edits(self) -> None:
        """Drop them (and what was kept of them on disk): the window then closes without asking."""


def ask_unsaved(parent: QWidget, what: Sequence[str]) -> Unsaved:
    """Save / Discard / Cancel about the edits of ``what`` (one question, however many)."""
    if len(what) == 1:
        text = f"Your edits of {what[0]} are not saved."
    else:
        text = "Your edits of " + ", ".join(what[:-1]) + f" and {what[-1]} are not saved."
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Unsaved edits",
        text,
        QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setInformativeText("Save keeps them as a new version; Discard drops them.")
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return Unsaved.SAVE
    if answer == QMessageBox.StandardButton.Discard:
        return Unsaved.DISCARD
    return Unsaved.CANCEL
