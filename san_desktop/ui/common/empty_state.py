"""What a page shows where its list would be when there is nothing to list: nothing yet (what to do to get
something), or nothing that matches a search or filter (how to clear it). One look for every page: a
title, a short explanation, optional steps, and buttons for the next move, centred."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QTextDocumentFragment
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

TEXT_WIDTH = 560  # the message's column at most: lines a reader's eye can follow
Action = tuple[str, str]  # (key, button label)


class PageState(enum.Enum):
    CONTENT = "content"  # the list (loading, or with rows)
    EMPTY = "empty"  # nothing yet: what to do
    NO_RESULTS = "no_results"  # a search or filter matches nothing: how to clear it


def _plain(rich: str) -> str:
    return QTextDocumentFragment.fromHtml(rich).toPlainText().replace("\xa0", " ")


def _label(*, rich: bool) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    return label


class EmptyState(QWidget):
    """A title, an explanation (rich text; its links are announced, never opened here), optional steps
    (left-aligned rich text) and buttons, centred in the space there is.

    Signals:
        action_triggered(str): the key of the button pressed.
        link_activated(str): the href of a link clicked in the explanation or the steps.
    """

    action_triggered = Signal(str)
    link_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = _label(rich=False)
        self.title.setObjectName("emptyStateTitle")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setWeight(QFont.Weight.DemiBold)
        self.title.setFont(font)
        self.text = _label(rich=True)
        self.steps = _label(rich=True)
        self.steps.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.note = _label(rich=True)  # below the buttons: what is offered, not needed
        for label in (self.text, self.steps, self.note):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
            label.linkActivated.connect(self.link_activated)
        self.buttons: dict[str, QPushButton] = {}
        self._button_row = QHBoxLayout()
        self._button_row.setSpacing(8)
        self._button_row.addStretch(1)
        self._button_row.addStretch(1)
        self._note_buttons = QHBoxLayout()
        self._note_buttons.setSpacing(8)
        self._note_buttons.addStretch(1)
        self._note_buttons.addStretch(1)

        column = QWidget()
        column.setMaximumWidth(TEXT_WIDTH)
        self.column = QVBoxLayout(column)
        self.column.setContentsMargins(16, 16, 16, 16)
        self.column.setSpacing(10)
        self.column.addWidget(self.title)
        self.column.addWidget(self.text)
        self.column.addWidget(self.steps)
        self.column.addLayout(self._button_row)
        self.column.addSpacing(6)
        self.column.addWidget(self.note)
        self.column.addLayout(self._note_buttons)
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(column, 8)
        centred.addStretch(1)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        outer.addLayout(centred)
        outer.addStretch(2)
        self.show_state("", "")

    def button(self, key: str, *, note: bool = False) -> QPushButton:
        """The button of ``key`` (made hidden the first time): pages may keep and connect it."""
        button = self.buttons.get(key)
        if button is None:
            button = QPushButton()
            button.setObjectName(f"emptyState_{key}")
            button.setVisible(False)
            button.clicked.connect(lambda _checked=False, k=key: self.action_triggered.emit(k))
            row = self._note_buttons if note else self._button_row
            row.insertWidget(row.count() - 1, button)
            self.buttons[key] = button
        return button

    def show_state(
        self,
        title: str,
        text: str,
        actions: Sequence[Action] = (),
        *,
        steps: str = "",
        note: str = "",
        note_actions: Sequence[Action] = (),
    ) -> None:
        """Show ``title`` and ``text`` (rich), ``steps`` (rich, left-aligned), the buttons of ``actions``
        and, below them, ``note`` with its buttons; every other button is hidden."""
        self.title.setText(title)
        self.title.setVisible(bool(title))
        self.text.setText(text)
        self.text.setVisible(bool(text))
        self.steps.setText(steps)
        self.steps.setVisible(bool(steps))
        self.note.setText(note)
        self.note.setVisible(bool(note))
        shown = {key for key, _label in (*actions, *note_actions)}
        for key, label in actions:
            self.button(key).setText(label)
        for key, label in note_actions:
            self.button(key, note=True).setText(label)
        for key, button in self.buttons.items():
            button.setVisible(key in shown)

    def shown_text(self) -> str:
        """Everything the state says, as plain text (for tests and accessibility checks)."""
        parts = [self.title.text()] + [_plain(label.text()) for label in (self.text, self.steps, self.note)]
        parts += [button.text() for button in self.buttons.values() if not button.isHidden()]
        return "\n".join(part for part in parts if part)


class StateStack(QStackedWidget):
    """A page's list (``content``) or, in its place, an ``EmptyState`` (``message``) saying why there is
    nothing to list. No signals of its own (the message's buttons and links are ``message``'s)."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.content = content
        self.message = EmptyState()
        self.addWidget(content)
        self.addWidget(self.message)
        self.kind = PageState.CONTENT

    def show_content(self) -> None:
        self.kind = PageState.CONTENT
        self.setCurrentWidget(self.content)

    def show_empty(
        self,
        title: str,
        text: str,
        actions: Sequence[Action] = (),
        *,
        steps: str = "",
        note: str = "",
        note_actions: Sequence[Action] = (),
    ) -> None:
        """Nothing yet: ``text`` (and ``steps``) say what to do to get something here."""
        self.message.show_state(title, text, actions, steps=steps, note=note, note_actions=note_actions)
        self.kind = PageState.EMPTY
        self.setCurrentWidget(self.message)

    def show_no_results(self, title: str, text: str, actions: Sequence[Action] = ()) -> None:
        """A search or filter matches nothing: ``actions`` should hold the way to clear it."""
        self.message.show_state(title, text, actions)
        self.kind = PageState.NO_RESULTS
        self.setCurrentWidget(self.message)
