"""The job rows' SQL on SQLite (``db.backends.base.JobsDriver``), on the DB-API cursors the job store hands it:
the writer thread's (``SqliteBackend.write_unit``: ``BEGIN IMMEDIATE`` ... ``COMMIT`` around the units waiting,
so no other writer comes between a claim's SELECT and its UPDATE), ``write_cursor``'s, or a cursor inside a
caller's transaction. Times are stored as the text SQLAlchemy's SQLite ``DateTime`` writes, so that what the
ORM reads and writes elsewhere agrees with these and compares correctly."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.core.jobs import AttemptRecord, Claim, JobRecord
from san_desktop.db.backends.job_rows import (
    ATTEMPT_COLUMNS,
    JOB_COLUMNS,
    SELECTED,
    STATUSES,
    Row,
    attempt_of,
    record_of,
)

RETURNING = f"RETURNING {SELECTED}"


def db_time(value: datetime) -> str:
    """A UTC datetime as SQLAlchemy stores it in SQLite: ``YYYY-MM-DD HH:MM:SS.ffffff``."""
    # the offset cut from the text rather than from the datetime (``replace`` costs more than the slice)
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


def _time(value: str | None) -> datetime | None:
    # parsed with its offset rather than given one afterwards (``replace`` costs more than the parse)
    return datetime.fromisoformat(value + "+00:00") if value else None


def _record(row: Row) -> JobRecord:
    return record_of(row, _time)


def _bind(value: object) -> object:
    if isinstance(value, datetime):
        return db_time(value)
    if isinstance(value, JobStatus | ErrorKind):
        return value.value
    return value


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _types(job_types: Collection[JobType]) -> list[str]:
    return sorted(job_type.value for job_type in job_types)


def _quoted(statuses: Iterable[JobStatus]) -> str:
    return ", ".join(f"'{status.value}'" for status in statuses)


_ACTIVE = "'PENDING', 'PROCESSING'"
_INSERTED = (
    "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, payload, created_at, "
    "updated_at) VALUES (?, ?, ?, 'PENDING', 0, ?, ?, ?, ?)"
)
# whether the claim's job is still its own: running, its session's, the same attempt
_OWNED = "id = ? AND status = 'PROCESSING' AND owner_session = ? AND attempts = ?"
# the same of a job held in a worker's hand, read by the statement that finishes the job before it
_HELD = (
    "(SELECT 1 FROM async_jobs AS held WHERE held.id = ? AND held.status = 'PROCESSING' "
    "AND held.owner_session = ? AND held.attempts = ?)"
)
# what each status sets beside itself when a job is moved to it (a claim and a finish set their own)
_SET_WITH = {
    # run again: one fresh attempt, now, by whichever worker claims it
    JobStatus.PENDING: "max_attempts = CASE WHEN max_attempts > attempts THEN max_attempts ELSE attempts + 1 END, "
    "run_after = NULL, finished_at = NULL, owner_session = NULL, lease_until = NULL",
    JobStatus.CANCELLED: "finished_at = :now, lease_until = NULL",
    JobStatus.FAILED: "finished_at = :now, lease_until = NULL, owner_session = NULL",
    JobStatus.COMPLETED: "finished_at = :now, lease_until = NULL, owner_session = NULL",
}
# whether a FAILED job is one the sweep retries (transient, attempts left)
_RETRIED = "status = 'FAILED' AND error_kind = 'TRANSIENT' AND attempts < max_attempts"


def _owned(claim: Claim) -> tuple[str, str, int]:
    return (claim.job.id, claim.session_id, claim.attempt)


@functools.cache
def _finish_sql(columns: tuple[str, ...], spend_attempt: bool, look: bool) -> str:
    """``finish``'s statement for the columns it sets (a handful of kinds of finish: each made once)."""
    assert set(columns) <= set(JOB_COLUMNS), columns
    sets = ["updated_at = ?", *(f"{column} = ?" for column in columns)]
    if not spend_attempt:
        sets.append("attempts = attempts - 1")
    return f"UPDATE async_jobs SET {', '.join(sets)} WHERE {_OWNED} RETURNING {_HELD if look else 'NULL'}"


class SqliteJobs:
    """The job rows' SQL of a library in a SQLite file (``engine``'s)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    # --- cursors ------------------------------------------------------------------------------

    @contextmanager
    def cursor_in(self, conn: sa.Connection) -> Iterator[Any]:
        cursor: Any = conn.connection.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self.engine.connect() as conn, self.cursor_in(conn) as cursor:
            yield cursor

    # --- enqueue ------------------------------------------------------------------------------

    @staticmethod
    def _inserted(job: JobRecord) -> tuple[object, ...]:
        stamp = db_time(job.created_at)
        return (job.id, job.job_type.value, job.target_id, job.max_attempts, job.payload, stamp, stamp)

    def insert(self, cursor: Any, job: JobRecord) -> bool:
        # the partial unique index on active jobs decides, with no savepoint around the statement
        cursor.execute(
            f"{_INSERTED} ON CONFLICT (target_id, job_type) WHERE status IN ({_ACTIVE}) DO NOTHING",
            self._inserted(job),
        )
        return bool(cursor.rowcount)

    def insert_many(self, cursor: Any, jobs: Sequence[JobRecord]) -> None:
        cursor.executemany(_INSERTED, [self._inserted(job) for job in jobs])

    def active_job_id(self, cursor: Any, job_type: JobType, target_id: str) -> str | None:
        row = cursor.execute(
            f"SELECT id FROM async_jobs WHERE job_type = ? AND target_id = ? AND status IN ({_ACTIVE})",
            (job_type.value, target_id),
        ).fetchone()
        return str(row[0]) if row is not None else None

    # --- claims, leases and finishes ----------------------------------------------------------------

    def claim(
        self,
        cursor: Any,
        session_id: str,
        job_types: Collection[JobType],
        now: datetime,
        lease_until: datetime,
        limit: int,
    ) -> list[JobRecord]:
        """A SELECT picks the jobs and one conditional UPDATE takes them, in the caller's ``BEGIN IMMEDIATE``
        transaction (no other writer comes between the two). Two statements, because each job gets a run id of
        its own made here: run ids are time-ordered UUIDv7 (the newest run of a kind is the greatest), which SQL
        cannot make."""
        types = _types(job_types)
        stamp = db_time(now)
        picked = [
            row[0]
            for row in cursor.execute(
                f"SELECT id FROM async_jobs WHERE status = 'PENDING' AND job_type IN ({_marks(len(types))}) "
                "AND (run_after IS NULL OR run_after <= ?) ORDER BY id LIMIT ?",
                (*types, stamp, limit),
            )
        ]
        if not picked:
            return []
        runs = [part for job_id in picked for part in (job_id, new_id())]
        rows = cursor.execute(
            "UPDATE async_jobs SET status = 'PROCESSING', owner_session = ?, attempts = attempts + 1, "
            "lease_until = ?, started_at = ?, updated_at = ?, run_after = NULL, "
            f"run_id = CASE id {' '.join('WHEN ? THEN ?' for _ in picked)} END "
            f"WHERE id IN ({_marks(len(picked))}) AND status = 'PENDING' {RETURNING}",
            (session_id, db_time(lease_until), stamp, stamp, *runs, *picked),
        ).fetchall()
        # (RETURNING keeps no order)
        return sorted(map(_record, rows), key=lambda record: record.id)

    def still_owned(self, cursor: Any, claim: Claim) -> bool:
        return cursor.execute(f"SELECT 1 FROM async_jobs WHERE {_OWNED}", _owned(claim)).fetchone() is not None

    def renew_leases(self, cursor: Any, claims: Iterable[Claim], lease_until: datetime) -> set[str]:
        until = db_time(lease_until)
        kept = set()
        for claim in claims:
            done = cursor.execute(f"UPDATE async_jobs SET lease_until = ? WHERE {_OWNED}", (until, *_owned(claim)))
            if done.rowcount:
                kept.add(claim.job.id)
        return kept

    def finish(
        self,
        cursor: Any,
        claim: Claim,
        values: Mapping[str, object],
        now: datetime,
        *,
        spend_attempt: bool = True,
        held: Claim | None = None,
    ) -> tuple[bool, bool | None]:
        found = cursor.execute(
            _finish_sql(tuple(values), spend_attempt, held is not None),
            (db_time(now), *map(_bind, values.values()), *_owned(claim), *(_owned(held) if held is not None else ())),
        ).fetchall()
        if not found:
            return False, None
        return True, (found[0][0] is not None) if held is not None else None

    def record_attempt(
        self, cursor: Any, claim: Claim, outcome: AttemptOutcome, error_text: str | None, now: datetime
    ) -> None:
        started = claim.job.started_at or now
        cursor.execute(
            f"INSERT INTO job_attempts ({ATTEMPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO NOTHING",
            (claim.attempt_id, claim.job.id, claim.attempt, claim.run_id, claim.session_id, claim.pool.value,
             db_time(started), db_time(now), outcome.value, error_text),
        )  # fmt: skip

    def wake(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> list[JobRecord]:
        types = _types(job_types)
        stamp = db_time(now)
        rows = cursor.execute(
            "UPDATE async_jobs SET run_after = NULL, updated_at = ? WHERE status = 'PENDING' "
            f"AND job_type IN ({_marks(len(types))}) AND run_after > ? {RETURNING}",
            (stamp, *types, stamp),
        ).fetchall()
        return [_record(row) for row in rows]

    # --- moving jobs between statuses --------------------------------------------------------------

    def transition(
        self, cursor: Any, job_ids: Sequence[str], new: JobStatus, sources: Sequence[JobStatus], now: datetime
    ) -> list[tuple[JobRecord, JobStatus]]:
        if new is JobStatus.PROCESSING:
            raise ValueError("only a claim starts a job: it starts the attempt and takes the lease")
        marks = ", ".join(f":id{index}" for index in range(len(job_ids)))
        params: dict[str, object] = {f"id{index}": job_id for index, job_id in enumerate(job_ids)}
        params["now"] = db_time(now)
        old = dict(cursor.execute(f"SELECT id, status FROM async_jobs WHERE id IN ({marks})", params).fetchall())
        chosen = f"id IN ({marks}) AND status IN ({_quoted(sources)})"
        if new is JobStatus.PENDING:
            chosen = (
                f"id IN (SELECT max(id) FROM async_jobs WHERE {chosen} GROUP BY job_type, target_id) "
                "AND NOT EXISTS (SELECT 1 FROM async_jobs AS queued WHERE queued.job_type = async_jobs.job_type "
                f"AND queued.target_id = async_jobs.target_id AND queued.status IN ({_ACTIVE}) "
                "AND queued.id != async_jobs.id)"
            )
        rows = cursor.execute(
            f"UPDATE async_jobs SET status = '{new.value}', updated_at = :now, {_SET_WITH[new]} "
            f"WHERE {chosen} {RETURNING}",
            params,
        ).fetchall()
        return [(record, STATUSES[old[record.id]]) for record in map(_record, rows)]

    def ids_of_targets(self, cursor: Any, target_ids: Sequence[str], statuses: Sequence[JobStatus]) -> list[str]:
        rows = cursor.execute(
            f"SELECT id FROM async_jobs WHERE target_id IN ({_marks(len(target_ids))}) "
            f"AND status IN ({_quoted(statuses)})",
            tuple(target_ids),
        )
        return [row[0] for row in rows]

    def delete_of_targets(self, cursor: Any, target_ids: Sequence[str], keep: Collection[str]) -> int:
        kept = tuple(keep)
        done = cursor.execute(
            f"DELETE FROM async_jobs WHERE target_id IN ({_marks(len(target_ids))}) "
            f"AND id NOT IN ({_marks(len(kept))})",
            (*target_ids, *kept),
        )
        return int(done.rowcount)

    # --- upkeep -------------------------------------------------------------------------------------

    def orphans(self, cursor: Any, live_session: str, now: datetime, *, limit: int | None = None) -> list[JobRecord]:
        rows = cursor.execute(
            f"SELECT {SELECTED} FROM async_jobs WHERE status = 'PROCESSING' AND (owner_session IS NULL "
            "OR owner_session NOT IN (SELECT id FROM app_sessions WHERE ended_at IS NULL) "
            "OR (owner_session != ? AND lease_until < ?)) ORDER BY id LIMIT ?",
            (live_session, db_time(now), -1 if limit is None else limit),
        )
        return [_record(row) for row in rows]

    def interrupt(self, cursor: Any, job: JobRecord, now: datetime, text: str) -> int:
        stamp = db_time(now)
        opened = cursor.execute(  # (a row opened by a version that wrote one at every claim)
            "UPDATE job_attempts SET outcome = 'INTERRUPTED', ended_at = ?, error_text = ? "
            "WHERE job_id = ? AND outcome IS NULL",
            (stamp, text, job.id),
        )
        if not opened.rowcount:  # the attempt was the job row's own: it joins the history
            cursor.execute(
                f"INSERT INTO job_attempts ({ATTEMPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'INTERRUPTED', ?)",
                (new_id(), job.id, job.attempts, job.run_id or "", job.owner_session or "", job.pool.value,
                 db_time(job.started_at or now), stamp, text),
            )  # fmt: skip
        row = cursor.execute(
            "SELECT count(*) FROM job_attempts WHERE job_id = ? AND outcome = 'INTERRUPTED'", (job.id,)
        ).fetchone()
        return int(row[0])

    def resume(self, cursor: Any, job: JobRecord, now: datetime, failed: str | None) -> JobRecord | None:
        stamp = db_time(now)
        params: tuple[object, ...]
        if failed is None:  # an interruption is not the job's fault: it spends no attempt
            sets, params = "status = 'PENDING', attempts = max(attempts - 1, 0)", (stamp,)
        else:
            sets = "status = 'FAILED', finished_at = ?, error_message = ?, error_kind = 'PERMANENT'"
            params = (stamp, stamp, failed)
        row = cursor.execute(
            f"UPDATE async_jobs SET updated_at = ?, owner_session = NULL, lease_until = NULL, run_after = NULL, "
            # still the attempt found: another machine's sweep may have ended it, and it been claimed again
            f"{sets} WHERE id = ? AND status = 'PROCESSING' AND owner_session IS ? AND attempts = ? {RETURNING}",
            (*params, job.id, job.owner_session, job.attempts),
        ).fetchone()
        return _record(row) if row is not None else None

    def stalled(self, cursor: Any, live_session: str, started_before: datetime, now: datetime) -> list[str]:
        rows = cursor.execute(
            "SELECT id FROM async_jobs WHERE status = 'PROCESSING' AND owner_session = ? "
            "AND (started_at < ? OR lease_until < ?)",
            (live_session, db_time(started_before), db_time(now)),
        )
        return [row[0] for row in rows]

    def overdue(self, cursor: Any, before: datetime, limit: int) -> list[str]:
        rows = cursor.execute(
            "SELECT id FROM async_jobs WHERE status = 'PENDING' AND coalesce(run_after, created_at) < ? LIMIT ?",
            (db_time(before), limit),
        )
        return [row[0] for row in rows]

    def retry_transient_failures(self, cursor: Any, now: datetime) -> list[JobRecord]:
        rows = cursor.execute(
            "UPDATE async_jobs SET status = 'PENDING', finished_at = NULL, run_after = NULL, updated_at = ? "
            f"WHERE {_RETRIED} AND NOT EXISTS (SELECT 1 FROM async_jobs AS other "
            "WHERE other.job_type = async_jobs.job_type AND other.target_id = async_jobs.target_id "
            f"AND other.id != async_jobs.id AND (other.id > async_jobs.id OR other.status IN ({_ACTIVE}))) "
            f"{RETURNING}",
            (db_time(now),),
        ).fetchall()
        return [_record(row) for row in rows]

    def prune(self, cursor: Any, completed_before: datetime, failed_before: datetime | None, limit: int) -> int:
        ended = "coalesce(finished_at, updated_at)"
        old = f"(status = 'COMPLETED' AND {ended} < ?)"
        params: tuple[object, ...] = (db_time(completed_before),)
        if failed_before is not None:
            old += f" OR (status IN ('FAILED', 'CANCELLED') AND {ended} < ? AND NOT ({_RETRIED}))"
            params += (db_time(failed_before),)
        done = cursor.execute(
            f"DELETE FROM async_jobs WHERE id IN (SELECT id FROM async_jobs WHERE {old} LIMIT ?)", (*params, limit)
        )
        return int(done.rowcount)

    # --- reading ----------------------------------------------------------------------------------

    def get(self, cursor: Any, job_id: str) -> JobRecord | None:
        row = cursor.execute(f"SELECT {SELECTED} FROM async_jobs WHERE id = ?", (job_id,)).fetchone()
        return _record(row) if row is not None else None

    def attempts(self, cursor: Any, job_id: str) -> list[AttemptRecord]:
        rows = cursor.execute(
            f"SELECT {ATTEMPT_COLUMNS} FROM job_attempts WHERE job_id = ? ORDER BY started_at", (job_id,)
        )
        return [attempt_of(row, _time) for row in rows]

    def changed_since(self, cursor: Any, since: datetime, limit: int, after_id: str) -> list[JobRecord]:
        # (uses the updated_at index)
        stamp = db_time(since)
        rows = cursor.execute(
            f"SELECT {SELECTED} FROM async_jobs WHERE updated_at >= ? "
            "AND (updated_at > ? OR id > ?) ORDER BY updated_at, id LIMIT ?",
            (stamp, stamp, after_id, limit),
        )
        return [_record(row) for row in rows]

    def jobs_named(self, cursor: Any, ids: Sequence[str]) -> list[JobRecord]:
        rows = cursor.execute(f"SELECT {SELECTED} FROM async_jobs WHERE id IN ({_marks(len(ids))})", tuple(ids))
        return [_record(row) for row in rows]

    def has_runnable(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> bool:
        types = _types(job_types)
        row = cursor.execute(
            f"SELECT 1 FROM async_jobs WHERE status = 'PENDING' AND job_type IN ({_marks(len(types))}) "
            "AND (run_after IS NULL OR run_after <= ?) LIMIT 1",
            (*types, db_time(now)),
        ).fetchone()
        return row is not None

    def waiting_summary(
        self, cursor: Any, job_types: Collection[JobType], now: datetime
    ) -> tuple[int, datetime] | None:
        types = _types(job_types)
        count, first = cursor.execute(
            "SELECT count(*), min(run_after) FROM async_jobs WHERE status = 'PENDING' "
            f"AND job_type IN ({_marks(len(types))}) AND run_after > ?",
            (*types, db_time(now)),
        ).fetchone()
        due = _time(first)
        if not count or due is None:
            return None
        return int(count), due
