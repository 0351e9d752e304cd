"""What both jobs drivers (``db.backends.sqlite.jobs``, ``db.backends.postgres.jobs``) read a job row as: its
columns in one order, and the record made of such a row with the database's own way of giving back a time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.jobs import AttemptRecord, JobRecord

JOB_COLUMNS = (
    "id", "job_type", "target_id", "status", "attempts", "max_attempts", "error_message", "error_kind",
    "payload", "run_after", "owner_session", "lease_until", "created_at", "updated_at", "started_at",
    "finished_at", "run_id",
)  # fmt: skip
SELECTED = ", ".join(JOB_COLUMNS)
ATTEMPT_COLUMNS = "id, job_id, attempt, run_id, session_id, pool, started_at, ended_at, outcome, error_text"

Row = tuple[Any, ...]  # a job row of JOB_COLUMNS, as the driver returns it
TimeOf = Callable[[Any], "datetime | None"]  # a stored time (or NULL) as an aware UTC datetime

# enums looked up, not called: every claim and finish reads a row
JOB_TYPES = {job_type.value: job_type for job_type in JobType}
STATUSES = {status.value: status for status in JobStatus}
ERROR_KINDS = {kind.value: kind for kind in ErrorKind}


def record_of(row: Row, time: TimeOf) -> JobRecord:
    """The record of a job row of ``JOB_COLUMNS``, its times read by ``time``."""
    (
        job_id, job_type, target_id, status, attempts, max_attempts, error_message, error_kind, payload,
        run_after, owner_session, lease_until, created_at, updated_at, started_at, finished_at, run_id,
    ) = row  # fmt: skip
    return JobRecord(
        id=job_id,
        job_type=JOB_TYPES[job_type],
        target_id=target_id,
        status=STATUSES[status],
        attempts=attempts,
        max_attempts=max_attempts,
        error_message=error_message,
        error_kind=ERROR_KINDS[error_kind] if error_kind else None,
        payload=payload,
        run_after=time(run_after),
        owner_session=owner_session,
        lease_until=time(lease_until),
        created_at=time(created_at),  # type: ignore[arg-type]  # (never NULL)
        updated_at=time(updated_at),  # type: ignore[arg-type]
        started_at=time(started_at),
        finished_at=time(finished_at),
        run_id=run_id,
    )


def attempt_of(row: Row, time: TimeOf) -> AttemptRecord:
    """The record of a ``job_attempts`` row of ``ATTEMPT_COLUMNS``."""
    attempt_id, job_id, attempt, run_id, session_id, pool, started_at, ended_at, outcome, error_text = row
    return AttemptRecord(
        id=attempt_id,
        job_id=job_id,
        attempt=attempt,
        run_id=run_id,
        session_id=session_id,
        pool=JobPool(pool),
        started_at=time(started_at),  # type: ignore[arg-type]  # (never NULL)
        ended_at=time(ended_at),
        outcome=AttemptOutcome(outcome) if outcome else None,
        error_text=error_text,
    )
