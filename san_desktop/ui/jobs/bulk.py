"""Retry and Cancel of many jobs at once, for the job monitor: the selection, everything a filter matches,
or a group of failures alike; confirmed with the count, done in batches off the GUI thread, with the
progress said as it goes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus
from san_desktop.queue.monitor import FailureGroup, JobFilter
from san_desktop.queue.records import BulkResult, JobRecord
from san_desktop.queue.transitions import RETRYABLE_STATUSES
from san_desktop.ui.common.context import AppContext

Confirm = Callable[[str], bool]
BulkCall = Callable[[Callable[[int], None]], BulkResult]


class _BulkProgress(QObject):
    """Made on the GUI thread; a bulk action's worker reports through it.

    Signals:
        advanced(int): how many jobs of the action are done.
    """

    advanced = Signal(int)


class BulkActions(QObject):
    """One bulk action at a time; the page asks ``running`` before offering another.

    Signals:
        said(str): what the message line should say (the progress, the outcome, why nothing was done).
        running_changed(bool): an action started (True) or ended (False).
    """

    said = Signal(str)
    running_changed = Signal(bool)

    def __init__(self, context: AppContext, confirm: Confirm, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self.confirm = confirm
        self.running = False

    def retry(self, jobs: list[JobRecord]) -> None:
        """Run the failed or cancelled ones of ``jobs`` again (several: confirmed first)."""
        ids = [job.id for job in jobs if job.status in RETRYABLE_STATUSES]
        if not ids or self.running:
            return
        if len(ids) > 1 and not self.confirm(f"Run {len(ids):,} failed or cancelled jobs again?"):
            return
        self._retry(ids)

    def cancel(self, jobs: list[JobRecord]) -> None:
        """Cancel the waiting ones of ``jobs``, ask the running ones to stop (several: confirmed first)."""
        ids = [job.id for job in jobs if job.status in ACTIVE_JOB_STATUSES]
        if not ids or self.running:
            return
        if len(ids) > 1 and not self.confirm(f"Cancel {len(ids):,} waiting or running jobs?"):
            return
        self._cancel(ids)

    def retry_matching(self, where: JobFilter) -> None:
        def found(ids: list[str]) -> None:
            if not ids:
                self.said.emit("No failed or cancelled job matches the filter.")
            elif self.confirm(f"Run {len(ids):,} failed or cancelled jobs that match the filter again?"):
                self._retry(ids)

        self._matching(where, RETRYABLE_STATUSES, found)

    def cancel_matching(self, where: JobFilter) -> None:
        def found(ids: list[str]) -> None:
            if not ids:
                self.said.emit("No waiting or running job matches the filter.")
            elif self.confirm(f"Cancel {len(ids):,} waiting or running jobs that match the filter?"):
                self._cancel(ids)

        self._matching(where, ACTIVE_JOB_STATUSES, found)

    def retry_group(self, group: FailureGroup) -> None:
        if self.running or not self.confirm(f"Run the {group.count:,} jobs that failed like this again?"):
            return
        signature = group.signature
        self._run("Retrying", lambda progress: self._app.jobs.retry_group(signature, progress), group.count)

    def _retry(self, job_ids: list[str]) -> None:
        self._run("Retrying", lambda progress: self._app.jobs.retry(job_ids, progress), len(job_ids))

    def _cancel(self, job_ids: list[str]) -> None:
        self._run("Cancelling", lambda progress: self._app.jobs.cancel(job_ids, progress), len(job_ids))

    def _matching(self, where: JobFilter, statuses: tuple[JobStatus, ...], then: Callable[[list[str]], None]) -> None:
        self._context.ops.run(lambda: self._app.jobs.matching_ids(where, statuses), then)

    def _run(self, verb: str, action: BulkCall, total: int) -> None:
        """Run a bulk action off the GUI thread, its progress said as it goes."""
        progress = _BulkProgress(self)
        progress.advanced.connect(lambda done: self.said.emit(f"{verb} {done:,} of {total:,} jobs…"))
        self._set_running(True)
        self.said.emit(f"{verb} {total:,} jobs…")

        def finished(result: BulkResult) -> None:
            progress.deleteLater()
            skipped = f"; {result.skipped:,} left as they were" if result.skipped else ""
            done = "queued again" if verb == "Retrying" else "cancelled"
            self.said.emit(f"{result.count:,} job(s) {done}{skipped}.")
            self._set_running(False)

        def refused(exc: Exception) -> None:
            progress.deleteLater()
            self.said.emit(str(exc))
            self._set_running(False)

        # (a read's ``run``, not a ``write``: the queue announces each batch of jobs as it commits, to the hub too)
        self._context.ops.run(lambda: action(progress.advanced.emit), finished, refused)

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.running_changed.emit(running)
