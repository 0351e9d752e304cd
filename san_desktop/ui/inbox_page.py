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

from san_desktop.app import Changes
from san_desktop.core.enums import JobStatus, SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.redact import first_cause
from san_desktop.core.text import preview
from san_desktop.services.scraps import ScrapInfo, ScrapService
from san_desktop.ui.capture import CaptureOutcome
from san_desktop.ui.context import AppContext
from san_desktop.ui.job_table_model import local_time
from san_desktop.ui.lazy_model import LazyTableModel, select_key, selected_row
from san_desktop.ui.scrap_states import (
    card_error,
    card_failed,
    card_text,
    fetch_failed,
    refine_text,
    retryable,
    scrap_label,
)

_FAILED = QColor("#b3261e")
MESSAGE_MS = 8000  # a passing message (scrapped, deleted, restored) clears itself after this


def _text_tooltip(info: ScrapInfo) -> str:
    """A titled link: its title and address, then its page's text once fetched; else the text."""
    if info.source_type is not SourceType.URL or not info.title:
        return preview(info.content, 600)
    lines = [info.title, info.source_ref or ""]
    return "\n".join(lines if info.awaiting_page else [*lines, "", preview(info.content, 600)])


class ScrapTableModel(LazyTableModel[ScrapInfo]):
    COLUMNS = ("Captured", "Scrap", "Source", "Card", "Refined")

    def __init__(self, scraps: ScrapService, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._scraps = scraps
        self.paused = False  # the AI pool is held by its breaker: waiting jobs say so

    def fetch_page(self, before_id: str | None, limit: int) -> list[ScrapInfo]:
        return self._scraps.list_scraps(before_id=before_id, limit=limit)

    def row_key(self, row: ScrapInfo) -> str:
        return row.id

    def cell(self, info: ScrapInfo, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            source = info.source_type.value.lower() + (f": {info.source_ref}" if info.source_ref else "")
            return (
                local_time(info.created_at),
                preview(scrap_label(info), 100),
                preview(source, 40),
                card_text(info, self.paused),
                refine_text(info, self.paused),
            )[column]
        if role == Qt.ItemDataRole.ForegroundRole and (
            (column == 3 and card_failed(info)) or (column == 4 and info.refine_status is JobStatus.FAILED)
        ):
            return _FAILED
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 1:
                return _text_tooltip(info)
            if column == 3:
                return card_error(info) or None
            if column == 4 and info.refine_error:
                return info.refine_error
        return None

    def repaint_states(self) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 3), self.index(self.rowCount() - 1, 4))


class InboxPage(QWidget):
    """Scraps newest first with what their analysis and refinement are really doing, live by the change
    hub; scrap the clipboard, delete (with undo), retry a failed analysis or refinement, open a card. A link
    whose page could not be fetched says why, and is fetched again or carded from its address and title.

    Signals:
        open_card(str): the user asked to see this card.
        scrap_clipboard_requested(): the "Scrap clipboard" button was pressed.
    """

    open_card = Signal(str)
    scrap_clipboard_requested = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._last_deleted: str | None = None
        self.model = ScrapTableModel(context.app.scraps)

        self.scrap_button = QPushButton("Scrap clipboard")
        self.scrap_button.setToolTip("Save what is on the clipboard as a scrap (Ctrl+Shift+V, anywhere in the app)")
        self.retry_button = QPushButton("Retry analysis")
        self.retry_button.setToolTip("Analyse the selected scrap again (its last analysis failed)")
        self.retry_refine_button = QPushButton("Retry refinement")
        self.retry_refine_button.setToolTip("Clean up the selected scrap's text again (its last try failed)")
        self.retry_fetch_button = QPushButton("Retry fetch")
        self.retry_fetch_button.setToolTip("Download the selected link's page again (its last try failed)")
        self.link_card_button = QPushButton("Make card from link")
        self.link_card_button.setToolTip("Make the selected link's card from its address and title alone")
        self.delete_button = QPushButton("Delete")
        self.undo_button = QPushButton("Undo delete")
        self.undo_button.setVisible(False)
        self.hint = "Copy something and press Ctrl+Shift+V, or drop text, links or files here."
        self.message = QLabel(self.hint)
        self.message.setWordWrap(True)
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._on_message_timer_timeout)

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
        for column, width in ((0, 150), (2, 120), (3, 240), (4, 120)):
            self.table.setColumnWidth(column, width)

        toolbar = QHBoxLayout()
        toolbar.addWidget(QLabel("<h2>Inbox</h2>"))
        toolbar.addStretch(1)
        toolbar.addWidget(self.retry_fetch_button)
        toolbar.addWidget(self.link_card_button)
        toolbar.addWidget(self.retry_button)
        toolbar.addWidget(self.retry_refine_button)
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
        self.retry_refine_button.clicked.connect(self._on_retry_refine_button_clicked)
        self.retry_fetch_button.clicked.connect(self._on_retry_fetch_button_clicked)
        self.link_card_button.clicked.connect(self._on_link_card_button_clicked)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        context.hub.changed.connect(self._on_hub_changed)
        context.runner.breaker_changed.connect(self._on_runner_breaker_changed)
        self.model.reload()
        self._update_actions()

    def selected_scrap(self) -> ScrapInfo | None:
        return selected_row(self.table, self.model)

    def select_scrap(self, scrap_id: str) -> bool:
        return select_key(self.table, self.model, scrap_id)

    def say(self, text: str, ms: int = MESSAGE_MS) -> None:
        """A passing message: it gives way to the usual hint after ``ms``."""
        self.message.setText(text)
        self._message_timer.start(ms)

    def show_capture(self, outcome: CaptureOutcome) -> None:
        scrap_id = outcome.result.scrap_id
        self._refresh([scrap_id], then=lambda: self.select_scrap(scrap_id))
        if outcome.result.created:
            self.say(f"Scrapped: {outcome.label}")
        else:
            self.say(f"Already scrapped: {outcome.label} (the existing scrap is selected)")

    def show_rejection(self, reason: str) -> None:
        self.say(reason, 15_000)

    def _refresh(self, scrap_ids: list[str], then: Any = None) -> None:
        """Look at these scraps again (off the GUI thread) and update, add or drop their rows."""

        def apply(infos: list[ScrapInfo]) -> None:
            for info in sorted(infos, key=lambda item: item.id):
                if info.deleted:
                    self.model.remove(info.id)
                else:
                    self.model.upsert(info)
            self._update_actions()
            if then is not None:
                then()

        self._context.ops.run(lambda: self._app.scraps.get_many(scrap_ids), apply)

    def _concerns_loaded_rows(self, scrap_id: str) -> bool:
        """A scrap shown now, or newer than all shown (a new capture); others load when scrolled to."""
        if self.model.position_of(scrap_id) is not None:
            return True
        newest = self.model.row_at(0)
        return newest is None or scrap_id > newest.id

    def _update_actions(self) -> None:
        info = self.selected_scrap()
        self.delete_button.setEnabled(info is not None)
        self.retry_button.setVisible(info is not None and retryable(info.analysis_status))
        self.retry_refine_button.setVisible(info is not None and retryable(info.refine_status))
        self.retry_fetch_button.setVisible(info is not None and fetch_failed(info))
        # once its analysis was asked for, Retry analysis (or the card itself) takes over
        self.link_card_button.setVisible(
            info is not None and fetch_failed(info) and info.analysis_status is None and info.card_id is None
        )
        if info is not None and fetch_failed(info) and info.fetch_error and not self._message_timer.isActive():
            # the Card column is narrow: the whole reason where there is room for it
            self.message.setText(f"{scrap_label(info)}: {first_cause(info.fetch_error)}")
        elif not self._message_timer.isActive():
            self.message.setText(self.hint)

    def _retry(self, job_id: str | None, doing: str) -> None:
        if job_id is None:
            return
        self._context.ops.write(
            lambda: self._app.retry_job(job_id), lambda _job: self.say(doing), lambda exc: self.say(str(exc))
        )

    # --- slots --------------------------------------------------------------------------------

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        wanted = sorted(scrap_id for scrap_id in changes.scraps if self._concerns_loaded_rows(scrap_id))
        if wanted:
            self._refresh(wanted)

    def _on_runner_breaker_changed(self, _change: object) -> None:
        status = self._context.runner.breaker_status()
        self.model.paused = status is not None and status.state.value == "OPEN"
        self.model.repaint_states()

    def _on_message_timer_timeout(self) -> None:
        self.message.setText(self.hint)

    def _on_retry_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.analysis_job_id, "Analysing again…")

    def _on_retry_refine_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.refine_job_id, "Refining again…")

    def _on_retry_fetch_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.fetch_job_id, "Fetching the page again…")

    def _on_link_card_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None:
            return
        self._context.ops.write(
            lambda: self._app.analyse_link_now(info.id),
            lambda _changes: self.say("Making the card from the link's address and title…"),
            lambda exc: self.say(str(exc)),
        )

    def _on_delete_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None:
            return

        def deleted(_changes: Changes) -> None:
            self._last_deleted = info.id
            self.undo_button.setVisible(True)
            self.say(f"Deleted: {preview(scrap_label(info), 60)}", 30_000)

        def failed(exc: SanError) -> None:
            self.say(str(exc))
            self._refresh([info.id])  # deleted elsewhere meanwhile: the row goes

        self._context.ops.write(lambda: self._app.delete_scrap(info.id), deleted, failed, initiator=self)

    def _on_undo_button_clicked(self) -> None:
        scrap_id, self._last_deleted = self._last_deleted, None
        self.undo_button.setVisible(False)
        if scrap_id is None:
            return

        def restored(_changes: Changes) -> None:
            self.model.reload()  # it goes back to its place by capture time
            self.select_scrap(scrap_id)
            self.say("Restored.")

        self._context.ops.write(lambda: self._app.restore_scrap(scrap_id), restored, lambda exc: self.say(str(exc)))

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        info = self.model.row_at(index.row())
        if info is not None and info.card_id:
            self.open_card.emit(info.card_id)
