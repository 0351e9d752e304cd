"""The job monitor's failure groups: failed jobs grouped by error signature (ids, numbers and addresses
masked), each with its count, first and last time, an example error chain, and "Retry group"."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.redact import readable, readable_parts
from san_desktop.queue.monitor import FailureGroup
from san_desktop.ui.jobs.table_model import kind_label, local_time


class FailureGroupsView(QWidget):
    """Shows the groups it is given (``show_groups``); loading them is the page's business.

    Signals:
        retry_requested(object): the ``FailureGroup`` whose jobs should run again.
    """

    retry_requested = Signal(object)
    COLUMNS = ("Count", "Job types", "First seen", "Last seen", "Error")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._groups: list[FailureGroup] = []
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.example = QTextBrowser()
        self.example.setPlaceholderText("Select a group to see one of its errors in full.")
        self.retry_button = QPushButton("Retry group")
        self.retry_button.setToolTip("Run every failed job of the selected group again")
        self.retry_button.setEnabled(False)
        self.summary = QLabel()

        actions = QHBoxLayout()
        actions.addWidget(self.summary, 1)
        actions.addWidget(self.retry_button)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("failure_groups")  # its sizes are remembered under this name
        splitter.addWidget(self.table)
        splitter.addWidget(self.example)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(actions)
        layout.addWidget(splitter, 1)

        self.table.itemSelectionChanged.connect(self._on_table_item_selection_changed)
        self.retry_button.clicked.connect(self._on_retry_button_clicked)

    @property
    def groups(self) -> list[FailureGroup]:
        return list(self._groups)

    def show_groups(self, groups: list[FailureGroup]) -> None:
        """Replace the rows, keeping the selected group selected if it is still there."""
        selected = self.selected_group()
        self._groups = list(groups)
        self.table.setRowCount(len(groups))
        for row, group in enumerate(groups):
            cells = (
                f"{group.count:,}",
                ", ".join(dict.fromkeys(kind_label(*kind) for kind in group.kinds)),  # as the list names them
                local_time(group.first_seen),
                local_time(group.last_seen),
                readable(group.signature),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 4:
                    item.setToolTip(readable(group.example, "\n\u2190 "))
                self.table.setItem(row, column, item)
        total = sum(group.count for group in groups)
        self.summary.setText(f"{total:,} failed job(s) in {len(groups)} group(s)" if groups else "No failed jobs.")
        if selected is not None:
            self.select(selected.signature)
        self._on_table_item_selection_changed()

    def select(self, signature: str) -> bool:
        for row, group in enumerate(self._groups):
            if group.signature == signature:
                self.table.selectRow(row)
                return True
        return False

    def selected_group(self) -> FailureGroup | None:
        rows = self.table.selectionModel().selectedRows()
        return self._groups[rows[0].row()] if rows and rows[0].row() < len(self._groups) else None

    # --- slots --------------------------------------------------------------------------------

    def _on_table_item_selection_changed(self) -> None:
        group = self.selected_group()
        self.retry_button.setEnabled(group is not None)
        if group is None:
            self.example.clear()
            return
        chain = "<br>&larr; ".join(html.escape(part) for part in readable_parts(group.example))
        self.example.setHtml(f"<p><b>{group.count:,} job(s) failed like this</b>, for example:</p><p>{chain}</p>")

    def _on_retry_button_clicked(self) -> None:
        group = self.selected_group()
        if group is not None:
            self.retry_requested.emit(group)
