"""The queue's hot path in plain SQL: claiming a job and finishing an attempt.

These run for every job, so they skip SQLAlchemy (whose statement and result bookkeeping cost several
times the SQL itself) and run on a DB-API cursor: ``Database.write_cursor`` for a transaction of their
own, ``cursor_of`` inside a caller's session. Timestamps are written in the same text form SQLAlchemy's
SQLite DateTime uses, so ORM reads and these writes agree and compare correctly.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.queue.records import Claim, JobEvent, JobRecord
from san_desktop.queue.transitions import check_job_transition, sources_of

JOB_COLUMNS = (
    "id", "job_type", "target_id", "status", "attempts", "max_attempts", "error_message", "error_kind",
    "payload", "run_after", "owner_session", "lease_until", "created_at", "updated_at", "started_at",
    "finished_at", "run_id",
)  # fmt: skip
RETURNING = "RETURNING " + ", ".join(JOB_COLUMNS)


@contextmanager
def cursor_of(conn: sa.Connection) -> Iterator[Any]:
    """A DB-API cursor on ``conn``'s connection, inside whatever transaction ``conn`` has open."""
    with closing(conn.connection.cursor()) as cursor:
        yield cursor


def db_time(value: datetime) -> str:
    """A UTC datetime as SQLAlchemy stores it in SQLite: ``YYYY-MM-DD HH:MM:SS.ffffff``."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value).replace(tzinfo=UTC) if value else None


def record_from_row(row: Sequence[Any]) -> JobRecord:
    values = dict(zip(JOB_COLUMNS, row, strict=True))
    created = _parse_time(values["created_at"])
    updated = _parse_time(values["updated_at"])
    assert created is not None
    assert updated is not None
    return JobRecord(
        id=values["id"],
        job_type=JobType(values["job_type"]),
        target_id=values["target_id"],
        status=JobStatus(values["status"]),
        attempts=values["attempts"],
        max_attempts=values["max_attempts"],
        error_message=values["error_message"],
        error_kind=ErrorKind(values["error_kind"]) if values["error_kind"] else None,
        payload=values["payload"],
        run_after=_parse_time(values["run_after"]),
        owner_session=values["owner_session"],
        lease_until=_parse_time(values["lease_until"]),
        created_at=created,
        updated_at=updated,
        started_at=_parse_time(values["started_at"]),
        finished_at=_parse_time(values["finished_at"]),
        run_id=values["run_id"],
    )


def claim_next(
    cursor: Any,
    session_id: str,
    pool: JobPool,
    job_types: Collection[JobType],
    now: datetime,
    lease_until: datetime,
) -> Claim | None:
    """One conditional UPDATE takes the oldest runnable job and starts its attempt on the row itself (its
    number, start, session, lease and run); an attempt gets a row of its own only if it does not succeed."""
    types = sorted(job_type.value for job_type in job_types)
    placeholders = ", ".join("?" for _ in types)
    run_id = new_id()
    row = cursor.execute(
        "UPDATE async_jobs SET status = 'PROCESSING', owner_session = ?, attempts = attempts + 1, "
        "lease_until = ?, started_at = ?, updated_at = ?, run_after = NULL, run_id = ? "
        "WHERE id = (SELECT id FROM async_jobs WHERE status = 'PENDING' "
        f"AND job_type IN ({placeholders}) AND (run_after IS NULL OR run_after <= ?) ORDER BY id LIMIT 1) "
        f"AND status = 'PENDING' {RETURNING}",
        (session_id, db_time(lease_until), db_time(now), db_time(now), run_id, *types, db_time(now)),
    ).fetchone()
    if row is None:
        return None
    return Claim(record_from_row(row), new_id(), run_id, session_id, pool)


_OWNED = "id = ? AND status = 'PROCESSING' AND owner_session = ? AND attempts = ?"


def _owned_params(claim: Claim) -> tuple[str, str, int]:
    return (claim.job.id, claim.session_id, claim.attempt)


def still_owned(cursor: Any, claim: Claim) -> bool:
    return cursor.execute(f"SELECT 1 FROM async_jobs WHERE {_OWNED}", _owned_params(claim)).fetchone() is not None


def extend_lease(cursor: Any, claim: Claim, lease_until: datetime) -> bool:
    """The claim's lease runs until ``lease_until``, if the job is still the claim's."""
    done = cursor.execute(
        f"UPDATE async_jobs SET lease_until = ? WHERE {_OWNED}", (db_time(lease_until), *_owned_params(claim))
    )
    return bool(done.rowcount)


def finish(
    cursor: Any,
    claim: Claim,
    values: Mapping[str, object],
    outcome: AttemptOutcome,
    error_text: str | None,
    now: datetime,
    *,
    spend_attempt: bool = True,
) -> JobRecord | None:
    """Write the attempt's result only if the job is still this claim's; otherwise the attempt is
    recorded as DISCARDED and None is returned (a late worker never overwrites a newer state). An attempt
    that succeeded is the job row's own; any other is recorded in ``job_attempts``."""
    if "status" in values:
        check_job_transition(JobStatus.PROCESSING, JobStatus(str(values["status"])))
    columns = ["updated_at = ?"]
    params: list[object] = [db_time(now)]
    for column, value in values.items():
        assert column in JOB_COLUMNS, column
        columns.append(f"{column} = ?")
        params.append(_bind(value))
    if not spend_attempt:
        columns.append("attempts = attempts - 1")
    row = cursor.execute(
        f"UPDATE async_jobs SET {', '.join(columns)} WHERE {_OWNED} {RETURNING}",
        (*params, *_owned_params(claim)),
    ).fetchone()
    if row is None or outcome is not AttemptOutcome.SUCCEEDED:
        record_attempt(cursor, claim, outcome if row else AttemptOutcome.DISCARDED, error_text, now)
    return record_from_row(row) if row else None


def record_attempt(cursor: Any, claim: Claim, outcome: AttemptOutcome, error_text: str | None, now: datetime) -> None:
    """The claim's attempt, ended without success, in the job's history (once: a late worker that tries
    to finish twice is recorded by the first try)."""
    started = claim.job.started_at or now
    cursor.execute(
        "INSERT INTO job_attempts (id, job_id, attempt, run_id, session_id, pool, started_at, ended_at, outcome, "
        "error_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        (claim.attempt_id, claim.job.id, claim.attempt, claim.run_id, claim.session_id, claim.pool.value,
         db_time(started), db_time(now), outcome.value, error_text),
    )  # fmt: skip


def _bind(value: object) -> object:
    if isinstance(value, datetime):
        return db_time(value)
    if isinstance(value, JobStatus | ErrorKind):
        return value.value
    return value


def changed_since(cursor: Any, since: datetime, limit: int) -> list[JobRecord]:
    """Jobs whose row changed after ``since``, oldest change first (uses the updated_at index)."""
    rows = cursor.execute(
        f"SELECT {', '.join(JOB_COLUMNS)} FROM async_jobs WHERE updated_at > ? ORDER BY updated_at LIMIT ?",
        (db_time(since), limit),
    )
    return [record_from_row(row) for row in rows]


# --- moving jobs between statuses: a person's retry and cancel, of one job or many (one path) ----------


def _quoted(statuses: Sequence[JobStatus]) -> str:
    return ", ".join(f"'{status.value}'" for status in statuses)


_ACTIVE = _quoted((JobStatus.PENDING, JobStatus.PROCESSING))


# what each status sets beside itself when a job is moved to it (a claim and a finish set their own)
_SET_WITH = {
    # run again: one fresh attempt, now, by whichever worker claims it
    JobStatus.PENDING: "max_attempts = max(max_attempts, attempts + 1), run_after = NULL, finished_at = NULL, "
    "owner_session = NULL, lease_until = NULL",
    JobStatus.CANCELLED: "finished_at = :now, lease_until = NULL",
    JobStatus.FAILED: "finished_at = :now, lease_until = NULL, owner_session = NULL",
    JobStatus.COMPLETED: "finished_at = :now, lease_until = NULL, owner_session = NULL",
}


def transition_rows(
    cursor: Any, chunk: list[str], now: datetime, new: JobStatus, sources: frozenset[JobStatus] | None = None
) -> list[JobEvent]:
    """One UPDATE for the batch: the jobs in one of ``sources`` (every status the table allows to go to
    ``new`` when None; each given one must be allowed, or ``IllegalJobTransitionError``) move to ``new``.
    Back to PENDING, only the newest job per (type, target) of the batch moves, and none whose work is
    queued already (at most one job per work will still run). PROCESSING is a claim's (``claim_next``)."""
    if new is JobStatus.PROCESSING:
        raise ValueError("only a claim starts a job: it starts the attempt and takes the lease")
    allowed = sources_of(new, sources)
    if not allowed:
        return []
    marks = ", ".join(f":id{index}" for index in range(len(chunk)))
    params: dict[str, object] = {f"id{index}": job_id for index, job_id in enumerate(chunk)}
    params["now"] = db_time(now)
    old = dict(cursor.execute(f"SELECT id, status FROM async_jobs WHERE id IN ({marks})", params).fetchall())
    chosen = f"id IN ({marks}) AND status IN ({_quoted(allowed)})"
    if new is JobStatus.PENDING:
        chosen = (
            f"id IN (SELECT max(id) FROM async_jobs WHERE {chosen} GROUP BY job_type, target_id) "
            "AND NOT EXISTS (SELECT 1 FROM async_jobs AS queued WHERE queued.job_type = async_jobs.job_type "
            f"AND queued.target_id = async_jobs.target_id AND queued.status IN ({_ACTIVE}) "
            "AND queued.id != async_jobs.id)"
        )
    rows = cursor.execute(
        f"UPDATE async_jobs SET status = '{new.value}', updated_at = :now, {_SET_WITH[new]} WHERE {chosen} {RETURNING}",
        params,
    ).fetchall()
    return [JobEvent(record, JobStatus(old[record.id])) for record in map(record_from_row, rows)]
