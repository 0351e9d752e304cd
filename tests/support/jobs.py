"""Job settings and processors for tests (registered for the existing job types)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlalchemy as sa

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.core.settings import JobSettings
from san_desktop.db.tables import async_jobs
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.monitor import JobFilter, JobMonitor
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.scraps import CaptureResult


def fast_settings(**changes: object) -> JobSettings:
    """Defaults scaled down so retries and cooldowns happen within a test."""
    values: dict[str, object] = {
        "poll_interval_seconds": 0.05,
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "breaker_cooldown_seconds": 0.3,
        "breaker_max_cooldown_seconds": 0.6,
        "breaker_failure_threshold": 3,
    }
    values.update(changes)
    return JobSettings(**values)  # type: ignore[arg-type]


def insert_jobs(
    queue: JobStore,
    count: int,
    *,
    status: JobStatus = JobStatus.FAILED,
    job_type: JobType = JobType.CARD_ANALYSIS,
    error: str | Callable[[int], str] | None = "TransientError: AI server answered 500",
    target: Callable[[int], str] = lambda n: f"scrap-{n}",
    payload: str | None = None,
) -> list[str]:
    """``count`` jobs written straight into the table (as a long-running app would have left them), in
    one transaction; their ids, oldest first."""
    ids = [new_id() for _ in range(count)]
    now = queue.clock()
    finished = now if status not in (JobStatus.PENDING, JobStatus.PROCESSING) else None
    attempts = 0 if status is JobStatus.PENDING else 3
    rows = [
        {
            "id": job_id, "job_type": job_type, "target_id": target(n), "status": status, "attempts": attempts,
            "max_attempts": 3, "error_message": error(n) if callable(error) else error, "created_at": now,
            "updated_at": now, "finished_at": finished, "payload": payload,
        }
        for n, job_id in enumerate(ids)
    ]  # fmt: skip
    with queue.db.write_connection() as conn:
        conn.execute(sa.insert(async_jobs), rows)
    return ids


def analysis_job(result: CaptureResult) -> str:
    """The analysis job of a scrap captured as text (a link's waits for its page, and has none yet)."""
    assert result.analysis_job_id is not None
    return result.analysis_job_id


def jobs_of(queue: JobStore, *job_types: JobType, statuses: tuple[JobStatus, ...] = ()) -> list[JobRecord]:
    """The queue's jobs (of ``job_types`` and ``statuses`` when given), newest first."""
    return JobMonitor(queue).list_jobs(JobFilter(frozenset(statuses), frozenset(job_types)), limit=100_000)


@dataclass
class RecordingProcessor:
    """Runs ``behaviour`` (default: succeed) and records which job ran on which thread."""

    behaviour: Callable[[JobContext], None] | None = None
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (job id, attempt, thread name)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, context: JobContext) -> None:
        with self.lock:
            self.calls.append((context.job.id, context.claim.attempt, threading.current_thread().name))
        if self.behaviour is not None:
            self.behaviour(context)

    def count(self) -> int:
        with self.lock:
            return len(self.calls)

    def threads(self) -> set[str]:
        with self.lock:
            return {thread for _job, _attempt, thread in self.calls}
