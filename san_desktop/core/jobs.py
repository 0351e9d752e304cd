"""Plain, frozen values describing jobs: what crosses threads and reaches the GUI (never ORM objects), and what
the job store and each database's jobs driver (``db.backends.*.jobs``) hand each other, as River's drivers
hand ``rivertype.JobRow`` around. They sit here, below both, so that a driver needs nothing of the queue."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from san_desktop.core.enums import JOB_POOLS, AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType


@dataclass(frozen=True)
class JobRecord:
    id: str
    job_type: JobType
    target_id: str
    status: JobStatus
    attempts: int
    max_attempts: int
    error_message: str | None
    error_kind: ErrorKind | None
    payload: str | None
    run_after: datetime | None
    owner_session: str | None
    lease_until: datetime | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    run_id: str | None = None  # the current (or last) attempt's

    @property
    def pool(self) -> JobPool:
        return JOB_POOLS[self.job_type]

    @classmethod
    def from_row(cls, row: Any) -> JobRecord:
        """Of an ``AsyncJob`` model or a row of ``tables.async_jobs`` read through SQLAlchemy."""
        return cls(
            id=row.id,
            job_type=JobType(row.job_type),
            target_id=row.target_id,
            status=JobStatus(row.status),
            attempts=row.attempts,
            max_attempts=row.max_attempts,
            error_message=row.error_message,
            error_kind=ErrorKind(row.error_kind) if row.error_kind else None,
            payload=row.payload,
            run_after=row.run_after,
            owner_session=row.owner_session,
            lease_until=row.lease_until,
            created_at=row.created_at,
            updated_at=row.updated_at,
            started_at=row.started_at,
            finished_at=row.finished_at,
            run_id=row.run_id,
        )


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt of a job: a row of ``job_attempts`` for one that did not succeed, or the job row's own
    current attempt (running, or the one that succeeded)."""

    id: str
    job_id: str
    attempt: int
    run_id: str
    session_id: str
    pool: JobPool
    started_at: datetime
    ended_at: datetime | None
    outcome: AttemptOutcome | None
    error_text: str | None


@dataclass(frozen=True)
class Claim:
    """A job claimed by one attempt of one session; only this claim may finish it."""

    job: JobRecord
    attempt_id: str
    run_id: str
    session_id: str
    pool: JobPool

    @property
    def attempt(self) -> int:
        return self.job.attempts
