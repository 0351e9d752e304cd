from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.jobs.queue import JobQueue
from san_desktop.jobs.records import JobEvent, JobRecord

Index = QModelIndex | QPersistentModelIndex

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


class JobTableModel(QAbstractTableModel):
    """Jobs newest first, fetched lazily a page at a time (stays quick with 100,000 jobs), and kept live
    by ``apply_event`` from the runner's signals: changed rows update in place, new jobs appear on top.

    Rows live in a dict keyed by a sequence number: new jobs get numbers above the top, older pages
    below the bottom, so both ends grow in O(1) and a row's position is ``top - seq``.
    """

    COLUMNS = ("Type", "Target", "Status", "Attempts", "Updated", "Error")

    def __init__(self, queue: JobQueue, page_size: int = 200) -> None:
        super().__init__()
        self._queue = queue
        self._page_size = page_size
        self._rows: dict[int, JobRecord] = {}
        self._seq_of: dict[str, int] = {}
        self._top = 0  # sequence number of row 0
        self._bottom = 1  # sequence number of the last row; empty when bottom > top
        self._exhausted = False

    # --- loading ------------------------------------------------------------------------------

    def reload(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._seq_of.clear()
        self._top, self._bottom = 0, 1
        self._exhausted = False
        self.endResetModel()
        if self.canFetchMore(QModelIndex()):
            self.fetchMore(QModelIndex())

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and not self._exhausted

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008 - Qt's signature
        if parent.isValid() or self._exhausted:
            return
        oldest = self._rows[self._bottom].id if self.rowCount() else None
        page = [
            job for job in self._queue.list_jobs(before_id=oldest, limit=self._page_size) if job.id not in self._seq_of
        ]
        if len(page) < self._page_size:
            self._exhausted = True
        if not page:
            return
        first = self.rowCount()
        self.beginInsertRows(QModelIndex(), first, first + len(page) - 1)
        for job in page:  # an empty model has top 0 and bottom 1: the newest job gets number 0
            self._bottom -= 1
            self._rows[self._bottom] = job
            self._seq_of[job.id] = self._bottom
        self.endInsertRows()

    # --- live updates -------------------------------------------------------------------------

    def apply_event(self, event: JobEvent) -> None:
        job = event.job
        seq = self._seq_of.get(job.id)
        if seq is not None:
            self._rows[seq] = job
            row = self._top - seq
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))
            return
        newest = self._rows[self._top].id if self.rowCount() else None
        if newest is None or job.id > newest:
            self.beginInsertRows(QModelIndex(), 0, 0)
            if not self.rowCount():
                self._top, self._bottom = 0, 0
            else:
                self._top += 1
            self._rows[self._top] = job
            self._seq_of[job.id] = self._top
            self.endInsertRows()
        # an older job not fetched yet: it shows up with its current state when scrolled to

    # --- Qt model API -------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else max(0, self._top - self._bottom + 1)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.COLUMNS)

    def job_at(self, row: int) -> JobRecord | None:
        return self._rows.get(self._top - row) if 0 <= row < self.rowCount() else None

    def row_of(self, job_id: str) -> int | None:
        seq = self._seq_of.get(job_id)
        return None if seq is None else self._top - seq

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        job = self.job_at(index.row())
        if job is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return JOB_TYPE_LABELS[job.job_type]
            if column == 1:
                return job.target_id
            if column == 2:
                return status_text(job)
            if column == 3:
                return f"{job.attempts}/{job.max_attempts}"
            if column == 4:
                return local_time(job.updated_at)
            if column == 5:
                return (job.error_message or "").split("\n", 1)[0]
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return STATUS_COLORS.get(job.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5 and job.error_message:
                return job.error_message
            if column == 0:
                return job.job_type.value
        if role == Qt.ItemDataRole.UserRole:
            return job.id
        return None
