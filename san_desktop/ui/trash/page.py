"""The Trash page: what was deleted (a scrap, several, an import undone), each entry with how many scraps, cards
and quizzes it holds and until when it is kept; Restore brings the chosen entry back whole, Empty trash… deletes
everything for good after saying how much that is. Read and written off the GUI thread; read again when scraps
change while it is shown (here, in another window or by the command line), and whenever it is shown."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.errors import SanError
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import StateStack

if TYPE_CHECKING:
    from san_desktop.services.trash import Emptied, Restored, TrashEntry

Confirm = Callable[[str], bool]
COLUMNS = ("What", "Scraps", "Cards", "Quizzes", "Deleted", "Kept until")
MESSAGE_MS = 15_000


def _when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


class TrashPage(QWidget):
    """Signals:
    loaded(): what was just read is shown.
    """

    loaded = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None, *, confirm: Confirm | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self.confirm: Confirm = confirm or self._ask
        self.entries: list[TrashEntry] = []
        self._reading = False
        self._read_again = False

        self.about = QLabel()
        self.about.setWordWrap(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(lambda: self.message.setVisible(False))

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._on_table_item_selection_changed)
        self.table.itemDoubleClicked.connect(lambda _item: self.restore_selected())
        self.stack = StateStack(self.table)

        self.restore_button = QPushButton("&Restore")
        self.restore_button.setToolTip("Bring the chosen entry back, with its cards, edits, quizzes and answers")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self.restore_selected)
        self.empty_button = QPushButton("&Empty trash…")
        self.empty_button.setToolTip("Delete everything in the Trash for good (asks first)")
        self.empty_button.setEnabled(False)
        self.empty_button.clicked.connect(self.empty_trash)

        heading = QHBoxLayout()
        heading.addWidget(QLabel("<h2>Trash</h2>"))
        heading.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.restore_button)
        buttons.addStretch(1)
        buttons.addWidget(self.empty_button)
        layout = QVBoxLayout(self)
        layout.addLayout(heading)
        layout.addWidget(self.about)
        layout.addWidget(self.message)
        layout.addWidget(self.stack, 1)
        layout.addLayout(buttons)
        self._say_how_long()
        context.hub.changed.connect(self._on_hub_changed)
        self.refresh_page()

    # --- reading ------------------------------------------------------------------------------------------

    def refresh_page(self) -> None:
        """Read what the Trash holds (off the GUI thread); a read asked for meanwhile follows this one."""
        if self._reading:
            self._read_again = True
            return
        self._reading = True
        app = self._app
        self._context.ops.run(app.trash.entries, self._on_read, self.say, on_finished=self._on_read_finished)

    def _on_read_finished(self) -> None:
        self._reading = False
        if self._read_again:
            self._read_again = False
            self.refresh_page()

    def _on_read(self, entries: list[TrashEntry]) -> None:
        chosen = self.selected_entry()
        self.entries = entries
        self.table.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            cells = (
                entry.describe(),
                f"{entry.scraps:,}",
                f"{entry.cards:,}",
                f"{entry.quizzes:,}",
                _when(entry.deleted_at),
                _when(entry.purge_at),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
            if chosen is not None and entry.id == chosen.id:
                self.table.selectRow(row)
        if entries:
            self.stack.show_content()
        else:
            self.stack.show_empty(
                "The Trash is empty",
                "What you delete (a scrap, a card with its scrap, an import you undo) waits here with its cards, "
                "edits, quizzes and answers, so that you can bring it back.",
            )
        self.empty_button.setEnabled(bool(entries))
        self._on_table_item_selection_changed()
        self._say_how_long()
        self.loaded.emit()

    def _say_how_long(self) -> None:
        days = self._app.settings.trash.keep_days
        self.about.setText(
            f"Deleted scraps and undone imports are kept here for {days:g} days (the setting trash.keep_days), "
            "then deleted for good."
        )

    def selected_entry(self) -> TrashEntry | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.entries):
            return None
        return self.entries[rows[0].row()]

    # --- restoring and emptying ---------------------------------------------------------------------------

    def restore_selected(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            return
        self.restore_button.setEnabled(False)

        def restored(result: Restored) -> None:
            self.say(result.sentence())

        def failed(exc: SanError) -> None:
            self.say(str(exc))
            self.refresh_page()

        self._context.ops.write(lambda: self._app.restore_from_trash(entry.id), restored, failed, initiator=self)

    def empty_trash(self) -> None:
        """Count what the Trash holds, ask, and only then delete it for good."""

        def counted(planned: Emptied) -> None:
            if not planned.entries:
                self.refresh_page()
                return
            if not self.confirm(planned.question()):
                return
            self.empty_button.setEnabled(False)
            self._context.ops.write(self._app.empty_trash, lambda done: self.say(done.sentence()), self.say)

        self._context.ops.run(lambda: self._app.trash.empty(dry_run=True), counted, self.say)

    def say(self, text: str | SanError) -> None:
        """A passing message above the list."""
        self.message.setText(str(text))
        self.message.setVisible(True)
        self._message_timer.start(MESSAGE_MS)

    def _ask(self, question: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, "Empty trash", question, parent=self)
        delete = box.addButton("&Delete for good", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
        box.exec()
        return box.clickedButton() is delete

    # --- slots --------------------------------------------------------------------------------------------

    def _on_table_item_selection_changed(self) -> None:
        self.restore_button.setEnabled(self.selected_entry() is not None)

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        # hidden, it is read when shown (scraps change with every job of theirs: no read each time then)
        if self.isVisible() and (changes.scraps or changes.library or changes.settings):
            self.refresh_page()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_page()  # (the sweep may have purged some since, in this process: no notice reaches here)
