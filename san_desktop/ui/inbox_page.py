from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.text import preview
from san_desktop.queue.records import JobEvent
from san_desktop.services.scraps import ScrapInfo, ScrapService
from san_desktop.ui.capture import CaptureOutcome
from san_desktop.ui.context import AppContext
from san_desktop.ui.job_table_model import local_time
from san_desktop.ui.lazy_model import LazyTableModel, select_key, selected_row

_FAILED = QColor("#b3261e")


def analysis_text(info: ScrapInfo) -> str:
    if info.card_title:
        return info.card_title
    return (
        {
            JobStatus.PENDING: "Waiting to analyse…",
            JobStatus.PROCESSING: "Analysing…",
            JobStatus.FAILED: "Analysis failed",
            JobStatus.CANCELLED: "Analysis cancelled",
            JobStatus.COMPLETED: "Analysed",
        }.get(info.analysis_status, "Not analysed")
        if info.analysis_status
        else "Not analysed"
    )


def refine_text(info: ScrapInfo) -> str:
    if info.refined:
        return "Refined"
    if info.refine_status is JobStatus.FAILED:
        return "Failed"
    if info.refine_status in (JobStatus.PENDING, JobStatus.PROCESSING):
        return "Refining…"
    return "—"


class ScrapTableModel(LazyTableModel[ScrapInfo]):
    COLUMNS = ("Captured", "Scrap", "Source", "Card", "Refined")

    def __init__(self, scraps: ScrapService, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._scraps = scraps

    def fetch_page(self, before_id: str | None, limit: int) -> list[ScrapInfo]:
        return self._scraps.list_scraps(before_id=before_id, limit=limit)

    def row_key(self, row: ScrapInfo) -> str:
        return row.id

    def cell(self, info: ScrapInfo, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            source = info.source_type.value.lower() + (f": {info.source_ref}" if info.source_ref else "")
            return (
                local_time(info.created_at),
                preview(info.content, 100),
                preview(source, 40),
                analysis_text(info),
                refine_text(info),
            )[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 3 and info.analysis_status is JobStatus.FAILED:
            return _FAILED
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 1:
                return preview(info.content, 600)
            if column == 3 and info.analysis_error:
                return info.analysis_error
        return None


class InboxPage(QWidget):
    """Scraps newest first with the state of their analysis and refinement, live by the runner's
    signals; scrap the clipboard, delete (with undo), open a scrap's card.

    Signals:
        open_card(str): the user asked to see this card.
        scrap_clipboard_requested(): the "Scrap clipboard" button was pressed.
    """

    open_card = Signal(str)
    scrap_clipboard_requested = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._last_deleted: str | None = None
        self._stale: set[str] = set()  # scraps whose row needs a fresh look, gathered between ticks
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(50)
        self._refresh_timer.timeout.connect(self._on_refresh_timer_timeout)
        self.model = ScrapTableModel(context.scraps)

        self.scrap_button = QPushButton("Scrap clipboard")
        self.scrap_button.setToolTip("Save what is on the clipboard as a scrap (Ctrl+Shift+V, anywhere in the app)")
        self.retry_button = QPushButton("Retry analysis")
        self.retry_button.setToolTip("Analyse the selected scrap again (its last analysis failed)")
        self.delete_button = QPushButton("Delete")
        self.undo_button = QPushButton("Undo delete")
        self.undo_button.setVisible(False)
        self.message = QLabel("Copy something and press Ctrl+Shift+V, or drop text, links or files here.")
        self.message.setWordWrap(True)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column, width in ((0, 150), (2, 120), (3, 240), (4, 80)):
            self.table.setColumnWidth(column, width)

        toolbar = QHBoxLayout()
        toolbar.addWidget(QLabel("<h2>Inbox</h2>"))
        toolbar.addStretch(1)
        toolbar.addWidget(self.retry_button)
        toolbar.addWidget(self.undo_button)
        toolbar.addWidget(self.delete_button)
        toolbar.addWidget(self.scrap_button)
        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)

        self.scrap_button.clicked.connect(self.scrap_clipboard_requested)
        self.delete_button.clicked.connect(self._on_delete_button_clicked)
        self.retry_button.clicked.connect(self._on_retry_button_clicked)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        context.runner.job_changed.connect(self._on_runner_job_changed)
        self.model.reload()
        self._update_actions()

    def selected_scrap(self) -> ScrapInfo | None:
        return selected_row(self.table, self.model)

    def select_scrap(self, scrap_id: str) -> bool:
        return select_key(self.table, self.model, scrap_id)

    def show_capture(self, outcome: CaptureOutcome) -> None:
        self._refresh([outcome.result.scrap_id])
        self.select_scrap(outcome.result.scrap_id)
        if outcome.result.created:
            self.message.setText(f"Scrapped: {outcome.label}")
        else:
            self.message.setText(f"Already scrapped: {outcome.label} (the existing scrap is selected)")

    def show_rejection(self, reason: str) -> None:
        self.message.setText(reason)

    def _refresh(self, scrap_ids: list[str]) -> None:
        for info in sorted(self._context.scraps.get_many(scrap_ids), key=lambda item: item.id):
            if info.deleted:
                self.model.remove(info.id)
            else:
                self.model.upsert(info)

    def _concerns_loaded_rows(self, scrap_id: str) -> bool:
        """A scrap shown now, or newer than all shown (a new capture); others load when scrolled to."""
        if self.model.position_of(scrap_id) is not None:
            return True
        newest = self.model.row_at(0)
        return newest is None or scrap_id > newest.id

    def _update_actions(self) -> None:
        info = self.selected_scrap()
        self.delete_button.setEnabled(info is not None)
        self.retry_button.setVisible(info is not None and info.analysis_status is JobStatus.FAILED)

    # --- slots --------------------------------------------------------------------------------

    def _on_runner_job_changed(self, event: JobEvent) -> None:
        scrap_id = event.job.target_id
        if event.job.job_type in (JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE) and self._concerns_loaded_rows(scrap_id):
            # many events arrive in bursts while jobs run: look at the scraps once per tick, together
            self._stale.add(scrap_id)
            if not self._refresh_timer.isActive():
                self._refresh_timer.start()

    def _on_refresh_timer_timeout(self) -> None:
        stale, self._stale = sorted(self._stale), set()
        self._refresh(stale)
        self._update_actions()

    def _on_retry_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None or info.analysis_job_id is None:
            return
        try:
            self._context.runner.retry(info.analysis_job_id)
        except SanError as exc:
            self.message.setText(str(exc))
        else:
            self.message.setText("Analysing again…")

    def _on_delete_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None:
            return
        self._context.scraps.delete(info.id)
        self.model.remove(info.id)
        self._last_deleted = info.id
        self.undo_button.setVisible(True)
        self.message.setText(f"Deleted: {preview(info.content, 60)}")
        self._update_actions()

    def _on_undo_button_clicked(self) -> None:
        if self._last_deleted is None:
            return
        try:
            self._context.scraps.restore(self._last_deleted)
        except SanError as exc:
            self.message.setText(str(exc))
        else:
            self.model.reload()  # it goes back to its place by capture time
            self.select_scrap(self._last_deleted)
            self.message.setText("Restored.")
        self._last_deleted = None
        self.undo_button.setVisible(False)

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        info = self.model.row_at(index.row())
        if info is not None and info.card_id:
            self.open_card.emit(info.card_id)
