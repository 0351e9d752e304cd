"""The Stars page's status lines: how many repositories are starred and when they were last synced; what a
refresh is doing ("Fetching starred repositories… page 2", "Ranking against your cards…", a wait for a rate
limit or a paused pool) with a busy bar; and how the last refresh failed, with a hint. Kept current by the
change hub's job news (and the runner's progress and pools); reads nothing itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from san_desktop.app import Changes
from san_desktop.core.enums import POOL_NAMES, JobStatus, JobType
from san_desktop.jobs.registry import JobProgress
from san_desktop.jobs.runner import JobRunner, PoolState
from san_desktop.queue.records import JobRecord
from san_desktop.ui.common.hub import ChangeHub
from san_desktop.ui.common.look import tone_style
from san_desktop.ui.quizzes.card import text_label
from san_desktop.ui.stars.state import FETCHING, SETTINGS_LINK, activity, newer, summary_text

if TYPE_CHECKING:  # numpy comes with the star service: it loads with the page's first read, after the first frame
    from san_desktop.services.stars import StarsStatus

ERROR_STYLE = "error"  # the tone of a failed refresh


class StarsActivity(QWidget):
    """Signals:
    busy_changed(bool): a refresh started (its jobs will run) or ended (Refresh may be clicked again).
    settings_requested(): the failure's "Open Settings" link was clicked.
    """

    busy_changed = Signal(bool)
    settings_requested = Signal()

    def __init__(self, runner: JobRunner, hub: ChangeHub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runner = runner
        self._sync_job: JobRecord | None = None  # the newest of each type, as the last load or event said
        self._rank_job: JobRecord | None = None
        self._fetched: tuple[str, int] | None = None  # (sync job, pages fetched so far)
        self._asking = False  # Refresh was clicked and the jobs are being asked for
        self._busy = False

        self.summary = QLabel()
        self.text = text_label()  # a wait for a rate limit says why: it may need two lines
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # pages are found one by one: no total to show
        self.progress.setFixedWidth(140)
        self.progress.setTextVisible(False)
        self.error = text_label(rich=True)
        self.error.setStyleSheet(tone_style(ERROR_STYLE))
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        running = QHBoxLayout()
        running.addWidget(self.progress)
        running.addWidget(self.text, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addLayout(running)
        layout.addWidget(self.error)

        self.error.linkActivated.connect(self._on_error_link_activated)
        hub.changed.connect(self._on_hub_changed)
        runner.job_progress.connect(self._on_runner_job_progress)
        runner.pools_changed.connect(self._on_runner_pools_changed)
        self._show()

    @property
    def busy(self) -> bool:
        return self._busy

    def show_loaded(self, status: StarsStatus | None, sync: JobRecord | None, rank: JobRecord | None) -> None:
        """What a load read (``status`` None: no token, nothing to sum up); events seen since it read
        the jobs win over it."""
        self.track(sync)
        self.track(rank)
        self.summary.setText(summary_text(status, self._sync_job) if status is not None else "")

    def track(self, job: JobRecord | None) -> None:
        """A newer state of a sync or ranking job (Refresh's answer, a load, an event)."""
        if job is None:
            return
        if job.job_type is JobType.GITHUB_STAR_SYNC:
            self._sync_job = newer(self._sync_job, job)
            if self._fetched is not None and self._fetched[0] == job.id and job.status is JobStatus.PENDING:
                self._fetched = None  # to be tried again: its pages are fetched anew
        elif job.job_type is JobType.GITHUB_STAR_RECOMMENDATION:
            self._rank_job = newer(self._rank_job, job)
        else:
            return
        self._show()

    def set_asking(self, asking: bool) -> None:
        self._asking = asking
        self._show()

    def _show(self) -> None:
        fetched, sync = self._fetched, self._sync_job
        pages = fetched[1] if fetched is not None and sync is not None and fetched[0] == sync.id else None
        now = activity(sync, self._rank_job, pages)
        text = now.text or (FETCHING if self._asking else "")
        if now.busy:
            text += self._paused_note()
        self.text.setText(text)
        self.text.setVisible(bool(text))
        busy = now.busy or self._asking
        self.progress.setVisible(busy)
        self.error.setText(now.error)
        self.error.setVisible(bool(now.error) and not self._asking)
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _paused_note(self) -> str:
        """Why a waiting job does not start: its pool is paused (by the user, or after failures)."""
        for job in (self._sync_job, self._rank_job):
            if job is None or job.status is not JobStatus.PENDING:
                continue
            state = self._runner.pool_status(job.pool).state
            if state is PoolState.PAUSED_BY_USER:
                return f" — {POOL_NAMES[job.pool]} jobs are paused: resume them on the Jobs page"
            if state is PoolState.PAUSED_BY_BREAKER:
                reason = self._runner.pool_status(job.pool).reason
                if reason is not None:
                    return f" — {POOL_NAMES[job.pool]} jobs are paused. {reason}"
                return f" — {POOL_NAMES[job.pool]} jobs are paused after failures; they try again shortly"
        return ""

    # --- slots --------------------------------------------------------------------------------

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        for job in changes.jobs:
            self.track(job)

    def _on_runner_job_progress(self, progress: JobProgress) -> None:
        if progress.job_type is JobType.GITHUB_STAR_SYNC:
            self._fetched = (progress.job_id, progress.index)
            self._show()

    def _on_runner_pools_changed(self) -> None:
        self._show()  # a paused pool is why a refresh waits

    def _on_error_link_activated(self, link: str) -> None:
        if link == SETTINGS_LINK:
            self.settings_requested.emit()
