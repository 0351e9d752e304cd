"""A secret's field in Settings (the API key, the GitHub token): where the secret comes from now, and,
beside the field, what works on this machine when no keyring can keep one (the environment variable) or
why what was typed was not stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QLineEdit

from san_desktop.core.credentials import environment_phrase, keyring_status
from san_desktop.ui.common.look import tone_style


@dataclass(frozen=True)
class SecretSource:
    source: str  # "keyring", the environment variable's name, or "none"
    keyring_usable: bool  # what is typed can be stored
    variables: str  # the environment variables that work instead: "GH_TOKEN (or GITHUB_TOKEN)"
    problem: str  # why the keyring cannot be used ("ok" when it can)


def read_source(source: Callable[[], str], name: str) -> SecretSource:
    """Runs off the GUI thread: reading the keyring may take a while (and tells if it fails)."""
    found = source()  # first: a keyring that fails here counts as unusable from now on
    _backend, usable, problem = keyring_status()
    return SecretSource(found, usable, environment_phrase(name), problem)


class SecretField:
    """A password line edit and the note below it; ``changed`` is called when the note's text changes
    (the dialog grows to show it whole). No signals of its own."""

    def __init__(self, none_placeholder: str, changed: Callable[[], None]) -> None:
        self._none_placeholder = none_placeholder
        self._changed = changed
        self.edit = QLineEdit()
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setPlaceholderText("…")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self._hint = ""
        self._enabled = True
        self.edit.textEdited.connect(self._on_edit_text_edited)

    def set_enabled(self, enabled: bool) -> None:
        """A disabled field (the embedded AI needs no key) keeps its note to itself."""
        self._enabled = enabled
        self.edit.setEnabled(enabled)
        self.note.setVisible(enabled and bool(self.note.text()))

    def text(self) -> str:
        return self.edit.text().strip()

    def show_source(self, found: SecretSource) -> None:
        named = {"keyring": "stored in the keyring", "none": self._none_placeholder}
        self.edit.setPlaceholderText(named.get(found.source, f"from {found.source}"))
        if found.keyring_usable:
            self._hint = ""
        else:
            self._hint = (
                f"No usable keyring here: set {found.variables} in SAN Desktop's environment instead. "
                "What is typed here can be tested, not kept."
            )
        self.note.setToolTip("" if found.keyring_usable else f"The keyring: {found.problem}")
        self._show(self._hint)

    def show_refused(self, sentence: str) -> None:
        """What was typed was not stored: the sentence says why and what works instead."""
        self._show(sentence, error=True)

    def clear_refused(self) -> None:
        self._show(self._hint)

    def _on_edit_text_edited(self, _text: str) -> None:
        self.clear_refused()  # what was refused is no longer what the field holds

    def _show(self, text: str, *, error: bool = False) -> None:
        self.note.setText(text)
        self.note.setStyleSheet(tone_style("error") if error else "")
        self.note.setVisible(self._enabled and bool(text))
        self._changed()
