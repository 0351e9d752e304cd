from __future__ import annotations

import html
import logging

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus
from san_desktop.core.errors import SanError
from san_desktop.jobs.runner import BreakerChange, JobRunner
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.ui.job_table_model import JOB_TYPE_LABELS, JobTableModel, local_time, status_text
from san_desktop.ui.lazy_model import select_key, selected_row

log = logging.getLogger(__name__)


class JobsPage(QWidget):
    """The job monitor: a live table of jobs, the selected job's error chain and attempt history,
    Retry for failed jobs and Cancel for waiting or running ones. No signals of its own."""

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self.model = JobTableModel(runner.queue)

        self.breaker_label = QLabel()
        self.refresh_button = QPushButton("Refresh")
        self.retry_button = QPushButton("Retry")
        self.cancel_button = QPushButton("Cancel job")
        self.retry_button.setToolTip("Run the selected failed or cancelled job again")
        self.cancel_button.setToolTip("Cancel the selected waiting job, or ask a running one to stop")
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((170, 230, 160, 70, 150)):
            self.table.setColumnWidth(column, width)

        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.setPlaceholderText("Select a job to see its errors and attempts.")

        toolbar = QHBoxLayout()
        toolbar.addWidget(QLabel("<h2>Jobs</h2>"))
        toolbar.addStretch(1)
        toolbar.addWidget(self.breaker_label)
        toolbar.addWidget(self.refresh_button)
        toolbar.addWidget(self.retry_button)
        toolbar.addWidget(self.cancel_button)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.message_label)
        layout.addWidget(splitter, 1)

        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        self.retry_button.clicked.connect(self._on_retry_button_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        runner.job_changed.connect(self._on_runner_job_changed)
        runner.breaker_changed.connect(self._on_runner_breaker_changed)

        self.model.reload()
        self._update_actions()
        self._show_breaker(None)

    # --- helpers ------------------------------------------------------------------------------

    def selected_job(self) -> JobRecord | None:
        return selected_row(self.table, self.model)

    def select_job(self, job_id: str) -> bool:
        return select_key(self.table, self.model, job_id)

    def _update_actions(self) -> None:
        job = self.selected_job()
        self.retry_button.setEnabled(job is not None and job.status in (JobStatus.FAILED, JobStatus.CANCELLED))
        self.cancel_button.setEnabled(job is not None and job.status in ACTIVE_JOB_STATUSES)

    def _show_details(self) -> None:
        job = self.selected_job()
        if job is None:
            self.details.clear()
            return
        attempts = self._runner.queue.attempts(job.id)
        parts = [
            f"<h3>{html.escape(JOB_TYPE_LABELS[job.job_type])} — {html.escape(status_text(job))}</h3>",
            "<table>",
            *(
                f"<tr><td><b>{label}</b>&nbsp;</td><td>{html.escape(value)}</td></tr>"
                for label, value in (
                    ("Job", job.id),
                    ("Target", job.target_id),
                    ("Attempts", f"{job.attempts} of {job.max_attempts}"),
                    ("Created", local_time(job.created_at)),
                    ("Updated", local_time(job.updated_at)),
                    ("Error kind", job.error_kind.value.lower() if job.error_kind else "—"),
                )
            ),
            "</table>",
        ]
        if job.error_message:
            chain = "<br>&larr; ".join(html.escape(part) for part in job.error_message.split(" <- "))
            parts.append(f"<h4>Error</h4><p>{chain}</p>")
        parts.append("<h4>Attempts</h4>")
        if not attempts:
            parts.append("<p>None yet.</p>")
        for attempt in attempts:
            outcome = attempt.outcome.value.lower() if attempt.outcome else "running"
            parts.append(
                f"<p><b>#{attempt.attempt}</b> {html.escape(local_time(attempt.started_at))} — "
                f"{html.escape(outcome)} <small>(run {html.escape(attempt.run_id)})</small></p>"
            )
            if attempt.error_text:
                parts.append(f"<pre>{html.escape(attempt.error_text.strip())}</pre>")
        self.details.setHtml("".join(parts))

    def _show_breaker(self, change: BreakerChange | None) -> None:
        status = change.status if change else self._runner.breaker_status()
        if status is None or status.state.value == "CLOSED":
            self.breaker_label.setText("AI jobs: running")
            self.breaker_label.setStyleSheet("")
        else:
            self.breaker_label.setText(f"AI jobs: {status.describe()}")
            self.breaker_label.setStyleSheet("color: #b3261e;")

    def _act(self, action: str) -> None:
        job = self.selected_job()
        if job is None:
            return
        try:
            if action == "retry":
                self._runner.retry(job.id)
                self.message_label.setText(f"Job {job.id} queued again.")
            else:
                self._runner.cancel(job.id)
                self.message_label.setText(f"Job {job.id} cancelled.")
        except SanError as exc:
            self.message_label.setText(str(exc))

    # --- slots --------------------------------------------------------------------------------

    def _on_runner_job_changed(self, event: JobEvent) -> None:
        selected = self.selected_job()
        self.model.apply_event(event)
        if selected is not None and selected.id == event.job_id:
            self._update_actions()
            self._show_details()

    def _on_runner_breaker_changed(self, change: BreakerChange) -> None:
        self._show_breaker(change)

    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_actions()
        self._show_details()

    def _on_refresh_button_clicked(self) -> None:
        self.model.reload()
        self._update_actions()

    def _on_retry_button_clicked(self) -> None:
        self._act("retry")

    def _on_cancel_button_clicked(self) -> None:
        self._act("cancel")
