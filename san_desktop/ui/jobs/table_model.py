from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt

from san_desktop.app import SanApp
from san_desktop.core.enums import JOB_STATUS_NAMES, JobStatus, JobType
from san_desktop.core.redact import first_cause, readable
from san_desktop.jobs.registry import JobProgress
from san_desktop.queue.monitor import JobFilter
from san_desktop.queue.payloads import CardAnalysisPayload, load_payload
from san_desktop.queue.records import JobRecord
from san_desktop.services.job_labels import LABELLED_JOB_TYPES
from san_desktop.ui.common.lazy_model import Background, LazyTableModel
from san_desktop.ui.common.look import tone

STATUS_TONES = {  # ``look.tone`` names: readable on light and dark windows
    JobStatus.FAILED: "error",
    JobStatus.COMPLETED: "success",
    JobStatus.PROCESSING: "info",
    JobStatus.CANCELLED: "muted",
}


JOB_TYPE_LABELS = {
    JobType.CARD_ANALYSIS: "Card analysis",
    JobType.SCRAP_REFINE: "Scrap refinement",
    JobType.TIL_GENERATION: "TIL generation",
    JobType.TIL_GITHUB_COMMIT: "TIL commit",  # to GitHub or a local repository: its target says which
    JobType.RECALL_QUIZ_GENERATION: "Recall quiz",
    JobType.GITHUB_STAR_RECOMMENDATION: "Star recommendations",
    JobType.GITHUB_STAR_SYNC: "Star sync",
    JobType.PAGE_FETCH: "Page fetch",
    JobType.TIL_INDEXING: "TIL indexing",
}


def local_time(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value else ""


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def status_text(job: JobRecord, now: datetime | None = None, progress: JobProgress | None = None) -> str:
    """The status as a person reads it: a waiting retry says when it runs, a multi-step job its step."""
    now = now or datetime.now(UTC)
    if job.status is JobStatus.PENDING and job.run_after and job.run_after > now:
        at = job.run_after.astimezone().strftime("%H:%M:%S")
        return f"Waiting to retry in {_duration((job.run_after - now).total_seconds())} ({at})"
    if job.status is JobStatus.PROCESSING and progress is not None:
        return f"{JOB_STATUS_NAMES[job.status]}: {progress.step} ({progress.index} of {progress.total})"
    return JOB_STATUS_NAMES[job.status]


def kind_label(job_type: JobType, payload: str | None) -> str:
    """What a job does, by its type and payload: a CARD_ANALYSIS that only re-embeds is a re-embedding."""
    if job_type is JobType.CARD_ANALYSIS and load_payload(CardAnalysisPayload, payload).embed_only:
        return "Card re-embedding"
    return JOB_TYPE_LABELS[job_type]


def type_label(job: JobRecord) -> str:
    return kind_label(job.job_type, job.payload)


class JobTableModel(LazyTableModel[JobRecord]):
    """The jobs a ``JobFilter`` matches, newest first, fetched lazily, kept live by ``upsert`` from the
    change hub (a job that does not match is not added; one shown already stays, updated, until the next
    reload); the target is shown by a human label (the scrap's card title or text) where there is one, a
    running multi-step job by its step."""

    COLUMNS = ("Type", "Target", "Status", "Attempts", "Updated", "Error")
    STATUS_COLUMN = 2

    def __init__(self, app: SanApp, page_size: int = 200, background: Background | None = None) -> None:
        super().__init__(page_size, background)
        self._app = app
        self._labels: dict[str, str] = {}
        self._progress: dict[str, JobProgress] = {}
        self._unlabelled: dict[str, JobRecord] = {}  # shown by target id until their labels are read
        self._labelling = False
        self.filter = JobFilter()

    def set_filter(self, where: JobFilter) -> None:
        self.filter = where
        self.reload()

    def fetch_page(self, before_id: str | None, limit: int) -> list[JobRecord]:
        jobs = self._app.jobs.list_jobs(self.filter, before_id=before_id, limit=limit)
        self._learn_labels(jobs)
        return jobs

    def set_progress(self, progress: JobProgress) -> None:
        """A running job started a step: its status cell says which."""
        self._progress[progress.job_id] = progress
        position = self.position_of(progress.job_id)
        if position is not None:
            cell = self.index(position, self.STATUS_COLUMN)
            self.dataChanged.emit(cell, cell)

    def progress_of(self, job_id: str) -> JobProgress | None:
        return self._progress.get(job_id)

    def repaint_statuses(self) -> None:
        """Waiting retries count down: redraw the status column (the view repaints what it shows)."""
        if self.rowCount():
            self.dataChanged.emit(
                self.index(0, self.STATUS_COLUMN), self.index(self.rowCount() - 1, self.STATUS_COLUMN)
            )

    def _learn_labels(self, jobs: list[JobRecord]) -> None:
        unknown = [job for job in jobs if job.job_type in LABELLED_JOB_TYPES and job.target_id not in self._labels]
        if unknown:
            self._labels.update(self._app.job_labels(unknown))

    def upsert(self, row: JobRecord) -> None:
        if self._takes(row):
            super().upsert(row)
        self._read_labels()

    def upsert_many(self, rows: Sequence[JobRecord]) -> None:
        super().upsert_many([row for row in rows if self._takes(row)])
        self._read_labels()

    def _takes(self, row: JobRecord) -> bool:
        """Whether a changed job is shown: one shown already is, a new one if the filter takes it. A new
        one's label is read off the GUI thread, with those of the others new meanwhile (an import adds
        thousands of jobs, a bulk retry re-queues as many: each read on the GUI thread froze it), except
        when the filter's text may match the label: then it is read at once, to decide."""
        if row.status is not JobStatus.PROCESSING:
            self._progress.pop(row.id, None)
        if self.position_of(row.id) is not None:
            return True
        unlabelled = row.job_type in LABELLED_JOB_TYPES and row.target_id not in self._labels
        if unlabelled and self.filter.text:
            self._learn_labels([row])
            unlabelled = False
        if not self.filter.matches(row, self._labels.get(row.target_id, "")):
            return False
        if unlabelled:
            self._unlabelled[row.target_id] = row
        return True

    def _read_labels(self) -> None:
        if self._labelling or not self._unlabelled or self._background is None:
            if self._background is None:  # (no background: as the pages are read, at once)
                self._learn_labels(list(self._unlabelled.values()))
                self._unlabelled.clear()
            return
        self._labelling = True
        jobs, self._unlabelled = list(self._unlabelled.values()), {}
        app = self._app

        def read() -> list[dict[str, str]]:
            return [app.job_labels(jobs)]

        def arrived(found: list[dict[str, str]]) -> None:
            self._labelling = False
            self._labels.update(found[0])
            if self.rowCount():  # the target column of what is shown says them now
                self.dataChanged.emit(self.index(0, 1), self.index(self.rowCount() - 1, 1))
            self._read_labels()  # those new while these were read

        def failed(_exc: Exception) -> None:
            self._labelling = False

        self._background(read, arrived, failed)

    def target_label(self, job: JobRecord) -> str:
        return self._labels.get(job.target_id, job.target_id)

    def row_key(self, row: JobRecord) -> str:
        return row.id

    def job_at(self, position: int) -> JobRecord | None:
        return self.row_at(position)

    def row_of(self, job_id: str) -> int | None:
        return self.position_of(job_id)

    def cell(self, job: JobRecord, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                type_label(job),
                self.target_label(job),
                status_text(job, progress=self._progress.get(job.id)),
                f"{job.attempts}/{job.max_attempts}",
                local_time(job.updated_at),
                first_cause(job.error_message),
            )[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            name = STATUS_TONES.get(job.status)
            return tone(name) if name else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5 and job.error_message:
                return readable(job.error_message, "\n\u2190 ")
            if column == 0:
                return job.job_type.value
            if column == 1:
                return job.target_id
        return None
