from __future__ import annotations

import html
import logging

from PySide6.QtCore import QItemSelection, Qt, QTimer
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

from san_desktop.app import Changes
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobPool, JobStatus
from san_desktop.jobs.breaker import BreakerState
from san_desktop.jobs.runner import BreakerChange
from san_desktop.queue.records import AttemptRecord, JobRecord
from san_desktop.ui.context import AppContext
from san_desktop.ui.job_table_model import JobTableModel, local_time, status_text, type_label
from san_desktop.ui.lazy_model import select_key, selected_row

log = logging.getLogger(__name__)


class JobsPage(QWidget):
    """The job monitor: a live table of jobs, the selected job's error chain and attempt history,
    Retry for failed jobs and Cancel for waiting or running ones, and the AI pool's pause with a live
    countdown and "Try now". No signals of its own."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._runner = context.runner
        self.model = JobTableModel(context.app)

        self.breaker_label = QLabel()
        self.try_now_button = QPushButton("Try now")
        self.try_now_button.setToolTip("Let the paused AI jobs run now instead of waiting for the pause to end")
        self.try_now_button.setVisible(False)
        self._countdown = QTimer(self)
        self._countdown.setInterval(1000)
        self._countdown.timeout.connect(self._on_countdown_timeout)
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
        toolbar.addWidget(self.try_now_button)
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
        self.try_now_button.clicked.connect(self._on_try_now_button_clicked)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        context.hub.changed.connect(self._on_hub_changed)
        self._runner.breaker_changed.connect(self._on_runner_breaker_changed)

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

        def loaded(attempts: list[AttemptRecord]) -> None:
            current = self.selected_job()
            if current is not None and current.id == job.id:
                self.details.setHtml(self._details_html(current, attempts))

        self._context.ops.run(lambda: self._app.queue.attempts(job.id), loaded)

    def _details_html(self, job: JobRecord, attempts: list[AttemptRecord]) -> str:
        parts = [
            f"<h3>{html.escape(type_label(job))} — {html.escape(status_text(job))}</h3>",
            "<table>",
            *(
                f"<tr><td><b>{label}</b>&nbsp;</td><td>{html.escape(value)}</td></tr>"
                for label, value in (
                    ("Job", job.id),
                    ("Target", f"{self.model.target_label(job)} ({job.target_id})"),
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
        return "".join(parts)

    def _show_breaker(self, change: BreakerChange | None) -> None:
        status = change.status if change else self._runner.breaker_status()
        paused = status is not None and status.state is BreakerState.OPEN
        if status is None or status.state is BreakerState.CLOSED:
            self.breaker_label.setText("AI jobs: running")
            self.breaker_label.setStyleSheet("")
        else:
            self.breaker_label.setText(f"AI jobs: {status.describe()}")
            self.breaker_label.setStyleSheet("color: #b3261e;")
        self.try_now_button.setVisible(paused)
        if paused and not self._countdown.isActive():
            self._countdown.start()
        elif not paused:
            self._countdown.stop()

    def _act(self, action: str) -> None:
        job = self.selected_job()
        if job is None:
            return
        app = self._app
        call = (lambda: app.retry_job(job.id)) if action == "retry" else (lambda: app.cancel_job(job.id))
        done = f"Job {job.id} queued again." if action == "retry" else f"Job {job.id} cancelled."
        self._context.ops.write(
            call, lambda _job: self.message_label.setText(done), lambda exc: self.message_label.setText(str(exc))
        )

    # --- slots --------------------------------------------------------------------------------

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        selected = self.selected_job()
        for job in changes.jobs:
            self.model.upsert(job)
        if selected is not None and any(job.id == selected.id for job in changes.jobs):
            self._update_actions()
            self._show_details()

    def _on_countdown_timeout(self) -> None:
        self._show_breaker(None)  # the remaining seconds, recounted

    def _on_try_now_button_clicked(self) -> None:
        self._runner.try_now(JobPool.AI)
        self._show_breaker(None)

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
