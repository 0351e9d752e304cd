from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QItemSelection, Qt, QTimer
from PySide6.QtGui import QHideEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, POOL_NAMES, JobPool, JobStatus
from san_desktop.jobs.registry import JobProgress
from san_desktop.queue.monitor import FailureGroup, JobFilter
from san_desktop.queue.records import JobRecord
from san_desktop.queue.transitions import RETRYABLE_STATUSES
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import StateStack
from san_desktop.ui.common.lazy_model import select_key
from san_desktop.ui.jobs.bulk import BulkActions
from san_desktop.ui.jobs.failures import FailureGroupsView
from san_desktop.ui.jobs.filters import JobFilterBar
from san_desktop.ui.jobs.pools import PoolBar
from san_desktop.ui.jobs.table_model import JobTableModel
from san_desktop.ui.jobs.views import JobDetails, JobTable

log = logging.getLogger(__name__)

REFRESH_DELAY_MS = 300  # counts and failure groups follow a burst of job changes once it settles
NO_JOBS = (
    "Background work shows here: fetching a link's page, making a card, writing a TIL or quizzes, syncing "
    "your GitHub stars. Scrap something and its jobs appear, with their progress, errors and retries."
)


class JobsPage(QWidget):
    """The job monitor: jobs filtered by status (live counts), type and text; Retry and Cancel on the
    selection or on everything the filter matches (confirmed with the count, done in batches off the GUI
    thread); failures grouped by error; the pools with Pause / Resume and the breaker's countdown; a
    running multi-step job's step; the selected job's error chain and attempts, copyable for a bug report.
    ``confirm`` asks before a bulk action (a question box by default). No signals of its own."""

    def __init__(
        self, context: AppContext, parent: QWidget | None = None, *, confirm: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._runner = context.runner
        self.bulk = BulkActions(context, confirm or self._ask, self)
        self.model = JobTableModel(context.app, background=self._in_background)

        self.pools = PoolBar(context.runner)
        self.filters = JobFilterBar()
        self.refresh_button = QPushButton("Refresh")
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Run the selected failed or cancelled jobs again (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel job")
        self.cancel_button.setToolTip("Cancel the selected waiting jobs, or ask running ones to stop (Delete)")
        self.retry_matching_button = QPushButton("Retry all matching…")
        self.retry_matching_button.setToolTip("Run again every failed or cancelled job the filter matches")
        self.cancel_matching_button = QPushButton("Cancel all matching…")
        self.cancel_matching_button.setToolTip("Cancel every waiting or running job the filter matches")
        self.copy_button = QPushButton("Copy details")
        self.copy_button.setToolTip("Copy the selected job with its whole attempt history, for a bug report")
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setVisible(False)

        self.table = JobTable(self.model)
        self.details = JobDetails(context, self.model, self.selected_job)
        self.failures = FailureGroupsView()

        header_row = QHBoxLayout()
        header_row.addWidget(QLabel("<h2>Jobs</h2>"))
        header_row.addSpacing(16)
        header_row.addWidget(self.pools, 1)
        actions = QHBoxLayout()
        for button in (
            self.retry_button,
            self.cancel_button,
            self.copy_button,
            self.retry_matching_button,
            self.cancel_matching_button,
        ):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.refresh_button)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("table_details")  # its sizes are remembered under this name
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        self.states = StateStack(splitter)
        jobs_tab = QWidget()
        jobs_layout = QVBoxLayout(jobs_tab)
        jobs_layout.setContentsMargins(0, 4, 0, 0)
        jobs_layout.addLayout(actions)
        jobs_layout.addWidget(self.states, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(jobs_tab, "Jobs")
        self.tabs.addTab(self.failures, "Failures by error")

        layout = QVBoxLayout(self)
        layout.addLayout(header_row)
        layout.addWidget(self.filters)
        layout.addWidget(self.message_label)
        layout.addWidget(self.tabs, 1)

        # shortcuts: Delete only where the jobs are (not while typing a filter)
        self._cancel_shortcut = QShortcut(QKeySequence.StandardKey.Delete, self.table)
        self._cancel_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._cancel_shortcut.setWhatsThis("Cancel the selected jobs")
        self._retry_shortcut = QShortcut(QKeySequence("Ctrl+R"), self)
        self._retry_shortcut.setWhatsThis("Retry the selected jobs")
        self._retry_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        # the window's Find lets go of Ctrl+F while this page shows, so the page works alone too
        self._find_shortcut = QShortcut(QKeySequence.StandardKey.Find, self)
        self._find_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)  # only while this page shows

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_DELAY_MS)
        self._countdown = QTimer(self)
        self._countdown.setInterval(1000)
        self._counting = False
        self._grouping = False
        self._stale_counts = False
        self._stale_groups = False

        self.refresh_button.clicked.connect(self._on_refresh_button_clicked)
        self.retry_button.clicked.connect(self._on_retry_button_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.retry_matching_button.clicked.connect(self._on_retry_matching_button_clicked)
        self.cancel_matching_button.clicked.connect(self._on_cancel_matching_button_clicked)
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.bulk.said.connect(self.say)
        self.bulk.running_changed.connect(self._on_bulk_running_changed)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection_changed)
        self.filters.changed.connect(self._on_filters_changed)
        self.failures.retry_requested.connect(self._on_failures_retry_requested)
        self.pools.pause_requested.connect(self._on_pools_pause_requested)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._cancel_shortcut.activated.connect(self._on_cancel_button_clicked)
        self._retry_shortcut.activated.connect(self._on_retry_button_clicked)
        self._find_shortcut.activated.connect(self.focus_search)
        self._refresh_timer.timeout.connect(self._on_refresh_timer_timeout)
        self._countdown.timeout.connect(self._on_countdown_timeout)
        self.states.message.action_triggered.connect(self._on_states_action_triggered)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved, self.model.loaded):
            signal.connect(self._update_state)
        context.hub.changed.connect(self._on_hub_changed)
        self._runner.job_progress.connect(self._on_runner_job_progress)

        self.model.reload()
        self._update_actions()
        self._refresh_counts()

    # --- what tests and the window use --------------------------------------------------------

    def selected_jobs(self) -> list[JobRecord]:
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [job for job in (self.model.job_at(row) for row in rows) if job is not None]

    def selected_job(self) -> JobRecord | None:
        jobs = self.selected_jobs()
        return jobs[0] if len(jobs) == 1 else None

    def select_job(self, job_id: str) -> bool:
        return select_key(self.table, self.model, job_id)

    def show_filter(self, where: JobFilter, *, ids_label: str = "") -> None:
        """Show the jobs ``where`` matches (the notification of failures, the crash banner's link)."""
        self.tabs.setCurrentIndex(0)
        self.filters.set_filter(where, ids_label=ids_label)

    def say(self, text: str) -> None:
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    # --- what the window's shortcuts call -----------------------------------------------------

    def focus_search(self) -> bool:
        self.tabs.setCurrentIndex(0)
        self.filters.focus_text()
        return True

    def refresh_page(self) -> None:
        """Read the jobs, their counts and the failure groups again (off the GUI thread)."""
        self.model.refresh()
        self._update_actions()
        self._schedule_refresh()

    def delete_selected(self) -> None:
        """Nothing: jobs are cancelled (the list's own Delete key), not deleted."""

    def _update_state(self) -> None:
        """The jobs, or why there are none: nothing has run yet, or the filter matches nothing."""
        if self.model.loading:
            return
        if self.model.rowCount():
            self.states.show_content()
        elif self.filters.filter == JobFilter():
            self.states.show_empty("No jobs yet", NO_JOBS)
        else:
            self.states.show_no_results(
                "No job matches this filter",
                "Choose All, another status or type, or change the text.",
                [("clear", "Clear filter")],
            )

    # --- helpers ------------------------------------------------------------------------------

    def _in_background(
        self, call: Callable[[], list[JobRecord]], done: Callable[[list[JobRecord]], None], failed: Callable[..., None]
    ) -> None:
        def refused(exc: Exception) -> None:
            self.say(str(exc))
            failed(exc)

        self._context.ops.run(call, done, refused)

    @staticmethod
    def _ask(text: str) -> bool:
        answer = QMessageBox.question(None, "SAN Desktop", text)
        return answer == QMessageBox.StandardButton.Yes

    def _update_actions(self) -> None:
        jobs = self.selected_jobs()
        idle = not self.bulk.running
        self.retry_button.setEnabled(idle and any(job.status in RETRYABLE_STATUSES for job in jobs))
        self.cancel_button.setEnabled(idle and any(job.status in ACTIVE_JOB_STATUSES for job in jobs))
        self.cancel_button.setText("Cancel jobs" if len(jobs) > 1 else "Cancel job")
        self.copy_button.setEnabled(len(jobs) == 1)
        self.retry_matching_button.setEnabled(idle)
        self.cancel_matching_button.setEnabled(idle)

    def _show_details(self) -> None:
        self.details.show_jobs(self.selected_jobs())

    def _schedule_refresh(self) -> None:
        self._stale_counts = True
        self._stale_groups = True
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _refresh_counts(self) -> None:
        if self._counting:
            self._stale_counts = True
            return
        self._counting, self._stale_counts = True, False
        where = self.filters.filter

        def counted(counts: dict[JobStatus, int]) -> None:
            self._counting = False
            self.filters.show_counts(counts)
            if self._stale_counts:
                self._refresh_counts()

        def refused(exc: Exception) -> None:
            self._counting = False
            self.say(str(exc))

        self._context.ops.run(lambda: self._app.jobs.counts(where), counted, refused)

    def _refresh_groups(self) -> None:
        if self._grouping:
            self._stale_groups = True
            return
        self._grouping, self._stale_groups = True, False

        def grouped(groups: list[FailureGroup]) -> None:
            self._grouping = False
            self.failures.show_groups(groups)
            if self._stale_groups and self.tabs.currentWidget() is self.failures:
                self._refresh_groups()

        def refused(exc: Exception) -> None:
            self._grouping = False
            self.say(str(exc))

        self._context.ops.run(self._app.jobs.failure_groups, grouped, refused)

    # --- slots --------------------------------------------------------------------------------

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if changes.settings:
            self.pools.refresh()
        if not changes.jobs:
            return
        selected = {job.id for job in self.selected_jobs()}
        self.model.upsert_many(changes.jobs)
        self._schedule_refresh()
        if selected & {job.id for job in changes.jobs}:
            self._update_actions()
            self._show_details()

    def _on_runner_job_progress(self, progress: JobProgress) -> None:
        self.model.set_progress(progress)
        current = self.selected_job()
        if current is not None and current.id == progress.job_id:
            self._show_details()

    def _on_refresh_timer_timeout(self) -> None:
        if self._stale_counts:
            self._refresh_counts()
        if self._stale_groups and self.tabs.currentWidget() is self.failures:
            self._refresh_groups()

    def _on_countdown_timeout(self) -> None:
        if self.isVisible():
            self.model.repaint_statuses()

    def _on_filters_changed(self, _where: JobFilter) -> None:
        self.model.set_filter(self.filters.filter)
        self._update_actions()
        self._show_details()
        self._refresh_counts()

    def _on_states_action_triggered(self, key: str) -> None:
        if key == "clear":
            self.filters.clear()

    def _on_tabs_current_changed(self, _index: int) -> None:
        self._say_whether_failures_are_shown()
        if self.tabs.currentWidget() is self.failures:
            self._refresh_groups()

    def _say_whether_failures_are_shown(self) -> None:
        self._app.jobs.failures_on_screen(self.isVisible() and self.tabs.currentWidget() is self.failures)

    def _on_table_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_actions()
        self._show_details()

    def _on_refresh_button_clicked(self) -> None:
        self.refresh_page()

    def _on_retry_button_clicked(self) -> None:
        self.bulk.retry(self.selected_jobs())

    def _on_cancel_button_clicked(self) -> None:
        self.bulk.cancel(self.selected_jobs())

    def _on_retry_matching_button_clicked(self) -> None:
        self.bulk.retry_matching(self.filters.filter)

    def _on_cancel_matching_button_clicked(self) -> None:
        self.bulk.cancel_matching(self.filters.filter)

    def _on_failures_retry_requested(self, group: FailureGroup) -> None:
        self.bulk.retry_group(group)

    def _on_bulk_running_changed(self, running: bool) -> None:
        self._update_actions()
        if not running:
            self._schedule_refresh()

    def _on_copy_button_clicked(self) -> None:
        job = self.selected_job()
        if job is not None:
            self.details.copy_job(job, self.say)

    def _on_pools_pause_requested(self, pool: JobPool, paused: bool) -> None:
        name = POOL_NAMES[pool]
        done = f"{name} jobs paused: running ones finish, no new ones start." if paused else f"{name} jobs resumed."
        self._context.ops.write(
            lambda: self._app.set_pool_paused(pool, paused), lambda _changes: self.say(done), initiator=self
        )

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._countdown.start()
        self._schedule_refresh()
        self._say_whether_failures_are_shown()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._countdown.stop()
        self._say_whether_failures_are_shown()
