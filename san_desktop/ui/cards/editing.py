"""Correcting the card the Cards page shows: Edit… (a window-modal dialog, not blocking the page), Undo of the
last edit, and Analyse again, which asks first whether to keep the fields the person edited. Every call goes
through the window's background operations and its change hub."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from san_desktop.core.errors import SanError
from san_desktop.queue.records import JobRecord
from san_desktop.services.card_fields import fields_phrase
from san_desktop.ui.cards.edit_dialog import CardEditDialog
from san_desktop.ui.common.context import AppContext

if TYPE_CHECKING:  # the card services import numpy; they load with the Cards page's first read
    from san_desktop.services.card_edits import CardEditResult
    from san_desktop.services.cards import CardSummary

KEEP, REPLACE = "keep", "replace"
UNDO_LINK = "undo-edit"
MESSAGE_MS = 30_000  # "Saved … Undo" stays this long

Say = Callable[[str, int], None]  # a passing message (rich text) and how long it stays


class CardEditor(QObject):
    """Edit…, Analyse again and Undo for the card shown (``show_card``); messages go to ``say``. No
    signals of its own."""

    def __init__(self, context: AppContext, say: Say, parent: QWidget) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._say = say
        self._parent = parent
        self.card: CardSummary | None = None
        self.dialog: CardEditDialog | None = None
        self.last_edit: CardEditResult | None = None  # what Undo takes back
        self.ask_about_edits: Callable[[CardSummary], str | None] = self._ask_about_edits  # tests answer it
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setToolTip("Correct the title, summary, tags or category of the card shown (F2)")
        self.analyse_button = QPushButton("Analyse again")
        self.analyse_button.setToolTip("Ask the AI provider for this card again (your edits are kept if you like)")
        self.edit_button.clicked.connect(self.edit)
        self.analyse_button.clicked.connect(self.analyse_again)
        self.show_card(None)

    def show_card(self, card: CardSummary | None) -> None:
        self.card = card
        self.edit_button.setEnabled(card is not None)
        self.analyse_button.setEnabled(card is not None)

    # --- edit and undo ------------------------------------------------------------------------------

    def edit(self) -> None:
        """Open the edit dialog of the card shown, with its tags' use on other cards read first (off the
        GUI thread)."""
        card = self.card
        if card is None:
            return
        app = self._app

        def load() -> tuple[CardSummary, dict[str, int], list[str]]:
            return app.cards.get(card.id).card, app.card_edits.tag_usage(card.id), app.card_edits.tag_names()

        self._context.ops.run(load, lambda loaded: self._open(*loaded), self._refused)

    def _open(self, card: CardSummary, usage: dict[str, int], tag_names: list[str]) -> None:
        if self.card is None or self.card.id != card.id:
            return  # another card is shown by now
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return
        dialog = CardEditDialog(self._context, card, usage, tag_names, self._parent)
        dialog.saved.connect(self._on_dialog_saved)
        dialog.finished.connect(self._on_dialog_finished)
        self.dialog = dialog
        dialog.open()

    def undo(self) -> None:
        result, self.last_edit = self.last_edit, None
        if result is None:
            return
        self._context.ops.write(
            lambda: self._app.undo_card_edit(result), lambda _undone: self._say("Edit undone.", 8000), self._refused
        )

    def _on_dialog_finished(self, _result: int) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _on_dialog_saved(self, result: CardEditResult) -> None:
        if not result.before:
            return  # saved as it was
        self.last_edit = result
        card = result.card
        what = fields_phrase(result.changed) if result.changed else "tags"
        title = html.escape(card.title if card is not None else "")
        others = f" and {result.others} other card{'s' if result.others != 1 else ''}" if result.others else ""
        follows = " Its similar cards follow once its new vector is made." if result.jobs else ""
        self._say(f"Saved the {what} of <b>{title}</b>{others}.{follows} <a href='{UNDO_LINK}'>Undo</a>", MESSAGE_MS)

    # --- analyse again ------------------------------------------------------------------------------

    def analyse_again(self) -> None:
        """Analyse the card shown again; when the person edited some of it, ask whether to keep that."""
        card = self.card
        if card is None:
            return
        replace = False
        if card.edited:
            answer = self.ask_about_edits(card)
            if answer is None:
                return
            replace = answer == REPLACE
        title = html.escape(card.title)

        def asked(_job: JobRecord) -> None:
            kept = f" Your edits of its {fields_phrase(card.edited)} are kept." if card.edited and not replace else ""
            self._say(f"<b>{title}</b> is analysed again in the background.{kept}", 8000)

        self._context.ops.write(
            lambda: self._app.analyse_card_again(card.id, replace_edits=replace), asked, self._refused
        )

    def _ask_about_edits(self, card: CardSummary) -> str | None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Analyse again",
            f"You edited its {fields_phrase(card.edited)}. Should the new analysis keep your edits or replace them?",
            QMessageBox.StandardButton.Cancel,
            self._parent,
        )
        keep = box.addButton("Keep my edits", QMessageBox.ButtonRole.AcceptRole)
        replace = box.addButton("Replace them", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(keep)
        box.exec()
        clicked = box.clickedButton()
        return KEEP if clicked is keep else REPLACE if clicked is replace else None

    def _refused(self, exc: SanError) -> None:
        self._say(html.escape(str(exc)), 8000)
