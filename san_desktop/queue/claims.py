"""The queue's hot path in plain SQL: claiming jobs and finishing an attempt.

These run for every job, so they skip SQLAlchemy (whose statement and result bookkeeping cost several
times the SQL itself) and run on a DB-API cursor: ``Database.write_cursor`` for a transaction of their
own (``Database.write_statement`` for one of a single statement), ``cursor_of`` inside a caller's
session. Timestamps are written in the same text form SQLAlchemy's SQLite DateTime uses, so ORM reads
and these writes agree and compare correctly.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
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
Row = tuple[Any, ...]  # a job row of JOB_COLUMNS, as the driver returns it
_SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"


@contextmanager
def cursor_of(conn: sa.Connection) -> Iterator[Any]:
    """A DB-API cursor on ``conn``'s connection, inside whatever transaction ``conn`` has open (on a server,
    one that takes this module's placeholders)."""
    cursor: Any = conn.connection.cursor()
    if conn.dialect.name == "postgresql":
        from san_desktop.db.backends.postgres.server import PortableCursor

        cursor = PortableCursor(cursor)
    try:
        with closing(cursor):
            yield cursor
    except BaseException:
        # A connection the server dropped under this cursor (SQLAlchemy did not run the statement, so it does not
        # know) is dropped from the pool, not reset there: the pool's rollback would fail, logged as an error.
        if getattr(conn.connection.dbapi_connection, "broken", False):
            conn.invalidate()
        raise


def db_time(value: datetime) -> str:
    """A UTC datetime as SQLAlchemy stores it in SQLite: ``YYYY-MM-DD HH:MM:SS.ffffff``."""
    # the offset cut from the text rather than from the datetime (``replace`` costs more than the slice)
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


def _parse_time(value: str | datetime | None) -> datetime | None:
    if not value:
        return None
    if isinstance(value, str):
        # parsed with its offset rather than given one afterwards (``replace`` costs more than the parse)
        return datetime.fromisoformat(value + "+00:00")
    return value.astimezone(UTC)  # a server's timestamp with time zone


_JOB_TYPES = {job_type.value: job_type for job_type in JobType}
_STATUSES = {status.value: status for status in JobStatus}
_ERROR_KINDS = {kind.value: kind for kind in ErrorKind}


def record_from_row(row: Row) -> JobRecord:
    """A job row of ``JOB_COLUMNS`` (every claim and finish reads one: enums are looked up, not called)."""
    (
        job_id, job_type, target_id, status, attempts, max_attempts, error_message, error_kind, payload,
        run_after, owner_session, lease_until, created_at, updated_at, started_at, finished_at, run_id,
    ) = row  # fmt: skip
    return JobRecord(
        id=job_id,
        job_type=_JOB_TYPES[job_type],
        target_id=target_id,
        status=_STATUSES[status],
        attempts=attempts,
        max_attempts=max_attempts,
        error_message=error_message,
        error_kind=_ERROR_KINDS[error_kind] if error_kind else None,
        payload=payload,
        run_after=_parse_time(run_after),
        owner_session=owner_session,
        lease_until=_parse_time(lease_until),
        created_at=_parse_time(created_at),  # type: ignore[arg-type]  # (never NULL)
        updated_at=_parse_time(updated_at),  # type: ignore[arg-type]
        started_at=_parse_time(started_at),
        finished_at=_parse_time(finished_at),
        run_id=run_id,
    )


def claim_rows(
    cursor: Any,
    session_id: str,
    job_types: Collection[JobType],
    now: datetime,
    lease_until: datetime,
    limit: int,
    *,
    skip_locked: bool = False,
) -> list[Row]:
    """Claim up to ``limit`` of the oldest runnable jobs and start each one's attempt on its row (its
    number, start, session, lease and run); an attempt gets a row of its own only if it does not succeed.
    Returns the claimed rows, for ``claims_of`` once the transaction is over (the write turn is not held
    for reading them).

    A SELECT picks the jobs and one conditional UPDATE takes them, in the caller's IMMEDIATE transaction (no
    other writer comes between the two). They are two statements because each job gets a run id of its
    own, made here: run ids are time-ordered UUIDv7 (the newest run of a kind is the greatest), which
    SQL cannot make. ``skip_locked`` (PostgreSQL, where workers of several machines claim at once): the
    SELECT locks the jobs it picks and passes over those another transaction is taking, so that two
    claims never wait for each other nor take the same job."""
    types = sorted(job_type.value for job_type in job_types)
    stamp = db_time(now)
    picked = [
        row[0]
        for row in cursor.execute(
            f"SELECT id FROM async_jobs WHERE status = 'PENDING' AND job_type IN ({', '.join('?' for _ in types)}) "
            f"AND (run_after IS NULL OR run_after <= ?) ORDER BY id LIMIT ?{_SKIP_LOCKED if skip_locked else ''}",
            (*types, stamp, limit),
        )
    ]
    if not picked:
        return []
    runs = [part for job_id in picked for part in (job_id, new_id())]
    rows: list[Row] = cursor.execute(
        "UPDATE async_jobs SET status = 'PROCESSING', owner_session = ?, attempts = attempts + 1, "
        "lease_until = ?, started_at = ?, updated_at = ?, run_after = NULL, "
        f"run_id = CASE id {' '.join('WHEN ? THEN ?' for _ in picked)} END "
        f"WHERE id IN ({', '.join('?' for _ in picked)}) AND status = 'PENDING' {RETURNING}",
        (session_id, db_time(lease_until), stamp, stamp, *runs, *picked),
    ).fetchall()
    return rows


def claims_of(rows: list[Row], session_id: str, pool: JobPool) -> list[Claim]:
    """The claims of rows ``claim_rows`` took, oldest job first (RETURNING keeps no order)."""
    records = sorted(map(record_from_row, rows), key=lambda record: record.id)
    return [Claim(record, new_id(), record.run_id or "", session_id, pool) for record in records]


_OWNED = "id = ? AND status = 'PROCESSING' AND owner_session = ? AND attempts = ?"


def _owned_params(claim: Claim) -> tuple[str, str, int]:
    return (claim.job.id, claim.session_id, claim.attempt)


def still_owned(cursor: Any, claim: Claim) -> bool:
    return cursor.execute(f"SELECT 1 FROM async_jobs WHERE {_OWNED}", _owned_params(claim)).fetchone() is not None


def renew_leases(cursor: Any, claims: Iterable[Claim], lease_until: datetime) -> set[str]:
    """The claims' leases run until ``lease_until``, for the jobs still their claims' (their ids). Not a change of
    the job (``updated_at`` stays, so no one is told of it)."""
    until = db_time(lease_until)
    kept = set()
    for claim in claims:
        done = cursor.execute(f"UPDATE async_jobs SET lease_until = ? WHERE {_OWNED}", (until, *_owned_params(claim)))
        if done.rowcount:
            kept.add(claim.job.id)
    return kept


# whether a job held in a worker's hand is still its claim's, read by the statement that finishes the job before
_HELD = (
    "(SELECT 1 FROM async_jobs AS held WHERE held.id = ? AND held.status = 'PROCESSING' "
    "AND held.owner_session = ? AND held.attempts = ?)"
)


def finish(
    cursor: Any,
    claim: Claim,
    values: Mapping[str, object],
    outcome: AttemptOutcome,
    error_text: str | None,
    now: datetime,
    *,
    spend_attempt: bool = True,
    held: Claim | None = None,
) -> tuple[bool, bool | None]:
    """Write the attempt's result only if the job is still this claim's, and say whether it was written
    (``finished_record`` is the row then); otherwise the attempt is recorded as DISCARDED (a late worker
    never overwrites a newer state). An attempt that succeeded is the job row's own; any other is recorded
    in ``job_attempts``, in the same transaction. With ``held``, the same statement looks whether that
    claim's job is still its own (the second answer; None when nothing was written).

    A success is one statement: it may run alone, as its own transaction (``Database.write_statement``);
    so may a result that finds the job no longer this claim's, since its UPDATE then changes nothing."""
    if "status" in values:
        check_job_transition(JobStatus.PROCESSING, _STATUSES[str(values["status"])])
    found = cursor.execute(
        _finish_sql(tuple(values), spend_attempt, held is not None),
        (
            db_time(now),
            *map(_bind, values.values()),
            *_owned_params(claim),
            *(_owned_params(held) if held is not None else ()),
        ),
    ).fetchall()
    if not found or outcome is not AttemptOutcome.SUCCEEDED:
        record_attempt(cursor, claim, outcome if found else AttemptOutcome.DISCARDED, error_text, now)
    if not found:
        return False, None
    return True, (found[0][0] is not None) if held is not None else None


@functools.cache
def _finish_sql(columns: tuple[str, ...], spend_attempt: bool, look: bool) -> str:
    """``finish``'s statement for the columns it sets (a handful of kinds of finish: each made once)."""
    assert set(columns) <= set(JOB_COLUMNS), columns
    sets = ["updated_at = ?", *(f"{column} = ?" for column in columns)]
    if not spend_attempt:
        sets.append("attempts = attempts - 1")
    return f"UPDATE async_jobs SET {', '.join(sets)} WHERE {_OWNED} RETURNING {_HELD if look else 'NULL'}"


def finished_record(claim: Claim, values: Mapping[str, Any], now: datetime, *, spend_attempt: bool = True) -> JobRecord:
    """The row ``finish`` wrote, made from the claim rather than read back: while the job was the claim's
    nothing else changed its row but its lease (every change of a job goes through this store, and each is
    conditional on its status; ``extend_lease`` is the claim's own), and every finish sets the lease, so it
    is the claimed row with what the finish set."""
    attempts = claim.job.attempts if spend_attempt else claim.job.attempts - 1
    return JobRecord(**{**vars(claim.job), **values, "updated_at": now, "attempts": attempts})


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


def changed_since(cursor: Any, since: datetime, limit: int, after_id: str = "") -> list[JobRecord]:
    """Jobs whose row changed after ``since`` (or at ``since``, with an id above ``after_id``: the page after
    one that ended there), oldest change first (uses the updated_at index)."""
    stamp = db_time(since)
    rows = cursor.execute(
        f"SELECT {', '.join(JOB_COLUMNS)} FROM async_jobs WHERE updated_at >= ? "
        "AND (updated_at > ? OR id > ?) ORDER BY updated_at, id LIMIT ?",
        (stamp, stamp, after_id, limit),
    )
    return [record_from_row(row) for row in rows]


def jobs_named(cursor: Any, ids: Sequence[str]) -> list[JobRecord]:
    """The jobs of ``ids`` as they are now (those that still exist), in no order."""
    marks = ", ".join("?" for _ in ids)
    rows = cursor.execute(f"SELECT {', '.join(JOB_COLUMNS)} FROM async_jobs WHERE id IN ({marks})", tuple(ids))
    return [record_from_row(row) for row in rows]


# --- moving jobs between statuses: a person's retry and cancel, of one job or many (one path) ----------


def _quoted(statuses: Sequence[JobStatus]) -> str:
    return ", ".join(f"'{status.value}'" for status in statuses)


_ACTIVE = _quoted((JobStatus.PENDING, JobStatus.PROCESSING))


# what each status sets beside itself when a job is moved to it (a claim and a finish set their own)
_SET_WITH = {
    # run again: one fresh attempt, now, by whichever worker claims it
    JobStatus.PENDING: "max_attempts = CASE WHEN max_attempts > attempts THEN max_attempts ELSE attempts + 1 END, "
    "run_after = NULL, finished_at = NULL, owner_session = NULL, lease_until = NULL",
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
    queued already (at most one job per work will still run). PROCESSING is a claim's (``claim_rows``)."""
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
