"""Find (Ctrl+F), Refresh (F5) and Delete for whichever page is shown.

Each action calls a method of the current page when the page has one (``focus_search``, ``refresh_page``,
``delete_selected``; a page that deletes offers its own Undo) and otherwise, or when the method answers
``False``, says in the status bar that the page has nothing of the kind. A page that binds one of these
keys itself (a ``QShortcut`` of its own) keeps that key while it is shown: the window's action lets go of
it, so Qt never sees one key bound twice (which it would refuse as ambiguous, doing nothing).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget

_DELETE_KEYS = ("Del", "Ctrl+Backspace") if sys.platform == "darwin" else ("Del",)
DECLARED = "declared_shortcuts"  # the keys an action answers to, even while a page has taken them


def set_shortcuts(action: QAction, keys: Iterable[QKeySequence | QKeySequence.StandardKey | str]) -> None:
    """Give ``action`` each of ``keys`` once, leaving out the empty ones (a standard key that the platform
    does not define, such as Preferences on Linux), and note them as its declared shortcuts."""
    sequences: list[QKeySequence] = []
    for key in keys:
        found = QKeySequence.keyBindings(key) if isinstance(key, QKeySequence.StandardKey) else [QKeySequence(key)]
        sequences.extend(sequence for sequence in found if not sequence.isEmpty() and sequence not in sequences)
    action.setShortcuts(sequences)
    action.setProperty(
        DECLARED, [sequence.toString(QKeySequence.SequenceFormat.PortableText) for sequence in sequences]
    )


def declared_shortcuts(action: QAction) -> list[QKeySequence]:
    """What ``action`` answers to: its declared keys (see ``set_shortcuts``), else its current ones."""
    declared = action.property(DECLARED)
    if isinstance(declared, list) and declared:
        return [QKeySequence(text) for text in declared]
    return list(action.shortcuts())


@dataclass(frozen=True)
class PageCommand:
    label: str
    method: str  # called on the current page when it has it
    keys: tuple[QKeySequence | QKeySequence.StandardKey | str, ...]
    missing: str  # said in the status bar when the page has no such method


COMMANDS = (
    PageCommand("&Find on this page", "focus_search", ("Ctrl+F",), "Nothing to search on this page."),
    # F5 alone: the platforms' other Refresh key (Ctrl+R) is Retry on the Jobs page
    PageCommand("&Refresh this page", "refresh_page", ("F5",), "Nothing to refresh on this page."),
    # Del alone: the platforms' other Delete keys (Ctrl+D on some) are too easy to press by mistake; on a
    # Mac keyboard the key marked delete is Backspace, and Finder deletes with Cmd+Backspace
    PageCommand("&Delete selected", "delete_selected", _DELETE_KEYS, "Nothing to delete on this page."),
)


class PageActions(QObject):
    """The three actions, for the window's menus. No signals of its own."""

    def __init__(self, current_page: Callable[[], QWidget | None], say: Callable[[str], None], parent: QObject) -> None:
        super().__init__(parent)
        self._current_page = current_page
        self._say = say
        self.actions: dict[str, QAction] = {}
        for command in COMMANDS:
            action = QAction(command.label, parent)
            set_shortcuts(action, command.keys)
            action.triggered.connect(lambda _checked=False, c=command: self._on_action_triggered(c))
            self.actions[command.method] = action

    @property
    def find(self) -> QAction:
        return self.actions["focus_search"]

    @property
    def refresh(self) -> QAction:
        return self.actions["refresh_page"]

    @property
    def delete(self) -> QAction:
        return self.actions["delete_selected"]

    def page_changed(self) -> None:
        """Let go of the keys the page now shown binds itself; take back the others."""
        page = self._current_page()
        taken = _own_keys(page) if page is not None else set()
        for action in self.actions.values():
            keys = declared_shortcuts(action)
            action.setShortcuts([key for key in keys if key.toString() not in taken])

    def _on_action_triggered(self, command: PageCommand) -> None:
        page = self._current_page()
        method = getattr(page, command.method, None) if page is not None else None
        # a page may have the method and still nothing of the kind (it answers False)
        if not callable(method) or method() is False:
            self._say(command.missing)


def _own_keys(page: QWidget) -> set[str]:
    return {
        shortcut.key().toString()
        for shortcut in page.findChildren(QShortcut)
        if shortcut.isEnabled() and not shortcut.key().isEmpty()
    }
