"""Correcting one card: its title, summary, tags (comma-separated, completed from the tags in use) and
category. A tag renamed in place that other cards have is offered for renaming on them too (a respelling
always is: a tag has one spelling). Saved off the GUI thread; a refusal is shown in the dialog, which keeps
what was typed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ai.base import DEFAULT_CATEGORIES
from san_desktop.core.errors import SanError
from san_desktop.services.card_fields import fields_phrase, renamed_tags, split_tags
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import SPACE_S, tone_style

if TYPE_CHECKING:  # the card services import numpy; they load with the Cards page's first read
    from san_desktop.services.card_edits import CardEdit, CardEditResult
    from san_desktop.services.cards import CardSummary


class TagCompleter(QCompleter):
    """Completes the tag being typed after the last comma, keeping the ones before it."""

    def splitPath(self, path: str) -> list[str]:
        return [path.rsplit(",", 1)[-1].strip()]

    def pathFromIndex(self, index: QModelIndex | QPersistentModelIndex) -> str:
        widget = self.widget()
        typed = widget.text() if isinstance(widget, QLineEdit) else ""
        before = typed.rsplit(",", 1)[0] + ", " if "," in typed else ""
        return before + str(index.data())


class CardEditDialog(QDialog):
    """Signals:
    saved(object): what the edit did (a ``CardEditResult``), once it is stored.
    """

    saved = Signal(object)

    def __init__(
        self,
        context: AppContext,
        card: CardSummary,
        usage: dict[str, int],
        tag_names: Sequence[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit card")
        self.resize(600, 420)
        self._context = context
        self._app = context.app
        self.card = card
        self.usage = usage  # of each of the card's tags: how many other cards have it

        self.title = QLineEdit(card.title)
        self.summary = QPlainTextEdit(card.summary)
        self.summary.setTabChangesFocus(True)
        self.tags = QLineEdit(", ".join(card.tags))
        self.tags.setPlaceholderText("up to 5, separated by commas")
        completer = TagCompleter(QStringListModel(list(tag_names), self), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.tags.setCompleter(completer)
        self.category = QComboBox()
        categories = list(DEFAULT_CATEGORIES)
        if card.category and card.category not in categories:
            categories.insert(0, card.category)  # an older card's: kept unless another is chosen
        self.category.addItems(categories)
        if card.category:
            self.category.setCurrentText(card.category)
        else:
            self.category.insertItem(0, "")
            self.category.setCurrentIndex(0)
        self.note = QLabel(
            f"You edited its {fields_phrase(card.edited)} before: analysing the card again keeps them."
            if card.edited
            else "The fields you change stay yours when the card is analysed again."
        )
        self.note.setWordWrap(True)
        self.note.setStyleSheet(tone_style("muted"))
        self.rename_box = QVBoxLayout()
        self.rename_box.setContentsMargins(0, 0, 0, 0)
        self.rename_box.setSpacing(SPACE_S // 2)
        self.renames: list[QCheckBox] = []  # offers to rename a tag on the other cards too
        self.respelled = QLabel()
        self.respelled.setWordWrap(True)
        self.respelled.setStyleSheet(tone_style("muted"))
        self.respelled.setVisible(False)
        self.rename_box.addWidget(self.respelled)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet(tone_style("error"))

        form = QFormLayout()
        form.addRow(self._label("Title", "title"), self.title)
        form.addRow(self._label("Summary", "summary"), self.summary)
        form.addRow(self._label("Tags", "tags"), self.tags)
        form.addRow("", self.rename_box)
        form.addRow(self._label("Category", "category"), self.category)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addLayout(form, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.tags.textChanged.connect(self._on_tags_text_changed)

    def _label(self, name: str, field: str) -> QLabel:
        """A field's label; an edited field's says so (analysing again keeps it)."""
        label = QLabel(f"{name}:")
        if field in self.card.edited:
            label.setText(f"{name} <small style='{tone_style('tag')}'>(edited)</small>:")
            label.setToolTip("You edited this: analysing the card again keeps it.")
        return label

    def rename_pairs(self) -> tuple[tuple[str, str], ...]:
        """The tag renames to make on every card: respellings, and the renames whose offer is ticked."""
        pairs = [
            (old, new)
            for old, new in renamed_tags(self.card.tags, self.tags.text())
            if old.casefold() == new.casefold()
        ]
        pairs += [(box.property("old"), box.property("new")) for box in self.renames if box.isChecked()]
        return tuple(pairs)

    def edit(self) -> CardEdit | None:
        """What the person changed (None: nothing)."""
        from san_desktop.services.card_edits import CardEdit  # loaded by the read that opened this dialog

        title = self.title.text()
        summary = self.summary.toPlainText()
        tags = split_tags(self.tags.text())
        category = self.category.currentText()
        edit = CardEdit(
            title=title if title.strip() != self.card.title else None,
            summary=summary if summary.strip() != self.card.summary else None,
            tags=tags if tags != self.card.tags else None,
            category=category if category != (self.card.category or "") else None,
            rename_tags=self.rename_pairs(),
        )
        return edit if edit != CardEdit() else None

    def save(self) -> None:
        edit = self.edit()
        if edit is None:
            self.accept()  # nothing changed: nothing to store
            return
        card_id = self.card.id
        self.buttons.setEnabled(False)
        self.status.clear()

        def stored(result: CardEditResult) -> None:
            self.saved.emit(result)
            self.accept()

        def refused(exc: SanError) -> None:
            self.buttons.setEnabled(True)
            self.status.setText(str(exc))

        self._context.ops.write(lambda: self._app.edit_card(card_id, edit), stored, refused, initiator=self)

    def _on_tags_text_changed(self, text: str) -> None:
        """Offer, for each tag renamed in place that other cards have, to rename it on them too."""
        for box in self.renames:
            self.rename_box.removeWidget(box)
            box.deleteLater()
        self.renames = []
        respelled = []
        for old, new in renamed_tags(self.card.tags, text):
            others = self.usage.get(old, 0)
            if old.casefold() == new.casefold():
                if others:
                    respelled.append(
                        f"“{old}” becomes “{new}” on its {_other_cards(others)} too: a tag has one spelling."
                    )
                continue
            if not others:
                continue
            has = "has" if others == 1 else "have"
            box = QCheckBox(f"Rename “{old}” to “{new}” on the {_other_cards(others)} that {has} it too")
            box.setProperty("old", old)
            box.setProperty("new", new)
            box.setChecked(True)
            self.rename_box.addWidget(box)
            self.renames.append(box)
        self.respelled.setText(" ".join(respelled))
        self.respelled.setVisible(bool(respelled))


def _other_cards(count: int) -> str:
    return f"{count} other card" if count == 1 else f"{count} other cards"
