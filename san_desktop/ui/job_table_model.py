from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from san_desktop.app import SCRAP_JOB_TYPES, SanApp
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.queue.payloads import CardAnalysisPayload, load_payload
from san_desktop.queue.records import JobRecord
from san_desktop.ui.lazy_model import LazyTableModel

STATUS_COLORS = {
    JobStatus.FAILED: QColor("#b3261e"),
    JobStatus.COMPLETED: QColor("#2e7d32"),
    JobStatus.PROCESSING: QColor("#1565c0"),
    JobStatus.CANCELLED: QColor("#757575"),
}


JOB_TYPE_LABELS = {
    JobType.CARD_ANALYSIS: "Card analysis",
    JobType.SCRAP_REFINE: "Scrap refinement",
    JobType.TIL_GENERATION: "TIL generation",
    JobType.TIL_GITHUB_COMMIT: "TIL commit to GitHub",
    JobType.RECALL_QUIZ_GENERATION: "Recall quiz",
    JobType.GITHUB_STAR_RECOMMENDATION: "Star recommendations",
}


def local_time(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value else ""


def status_text(job: JobRecord, now: datetime | None = None) -> str:
    if job.status is JobStatus.PENDING and job.run_after and job.run_after > (now or datetime.now(UTC)):
        return f"Waiting to retry ({job.run_after.astimezone().strftime('%H:%M:%S')})"
    return job.status.value.capitalize()


def type_label(job: JobRecord) -> str:
    if job.job_type is JobType.CARD_ANALYSIS and load_payload(CardAnalysisPayload, job.payload).embed_only:
        return "Card re-embedding"
    return JOB_TYPE_LABELS[job.job_type]


class JobTableModel(LazyTableModel[JobRecord]):
    """Jobs newest first, fetched lazily, kept live by ``upsert`` from the change hub; the target is
    shown by a human label (the scrap's card title or text) where there is one."""

    COLUMNS = ("Type", "Target", "Status", "Attempts", "Updated", "Error")

    def __init__(self, app: SanApp, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._app = app
        self._labels: dict[str, str] = {}

    def fetch_page(self, before_id: str | None, limit: int) -> list[JobRecord]:
        jobs = self._app.jobs.list_jobs(before_id=before_id, limit=limit)
        self._learn_labels(jobs)
        return jobs

    def _learn_labels(self, jobs: list[JobRecord]) -> None:
        unknown = sorted({j.target_id for j in jobs if j.job_type in SCRAP_JOB_TYPES} - self._labels.keys())
        self._labels.update(self._app.scraps.labels(unknown))

    def upsert(self, row: JobRecord) -> None:
        if row.job_type in SCRAP_JOB_TYPES and row.target_id not in self._labels:
            self._learn_labels([row])  # one primary-key lookup
        super().upsert(row)

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
                status_text(job),
                f"{job.attempts}/{job.max_attempts}",
                local_time(job.updated_at),
                (job.error_message or "").split("\n", 1)[0],
            )[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return STATUS_COLORS.get(job.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5 and job.error_message:
                return job.error_message
            if column == 0:
                return job.job_type.value
            if column == 1:
                return job.target_id
        return None
