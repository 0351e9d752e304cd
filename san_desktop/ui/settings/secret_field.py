"""A secret's field in Settings (the API key, the GitHub token): where the secret comes from now, and,
beside the field, what works on this machine when no keyring can keep one (the environment variable) or
why what was typed was not stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QLineEdit

from san_desktop.core.credentials import keyring_status, ways_to_set
from san_desktop.ui.common.look import tone_style


@dataclass(frozen=True)
class SecretSource:
    source: str  # "keyring", the environment variable's name, or "none"
    keyring_usable: bool  # what is typed can be stored
    ways: str  # every way to give the secret that works here (``core.credentials.ways_to_set``)


def read_source(source: Callable[[], str], name: str) -> SecretSource:
    """Runs off the GUI thread: reading the keyring may take a while (and tells if it fails)."""
    found = source()  # first: a keyring that fails here counts as unusable from now on
    return SecretSource(found, keyring_status()[1], ways_to_set(name))


class SecretField:
    """A password line edit and the note below it. No signals of its own."""

    def __init__(self, none_placeholder: str) -> None:
        self._none_placeholder = none_placeholder
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("…")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self._hint = ""

    def text(self) -> str:
        return self.edit.text().strip()

    def show_source(self, found: SecretSource) -> None:
        named = {"keyring": "stored in the keyring", "none": self._none_placeholder}
        self.edit.setPlaceholderText(named.get(found.source, f"from {found.source}"))
        if found.keyring_usable:
            self._hint = ""
        else:
            self._hint = f"{found.ways[0].upper()}{found.ways[1:]}. What is typed here can be tested, not kept."
        self._show(self._hint)

    def show_refused(self, sentence: str) -> None:
        """What was typed was not stored: the sentence says why and what works instead."""
        self._show(sentence, error=True)

    def clear_refused(self) -> None:
        self._show(self._hint)

    def _show(self, text: str, *, error: bool = False) -> None:
        self.note.setText(text)
        self.note.setStyleSheet(tone_style("error") if error else "")
        self.note.setVisible(bool(text))
