"""The job rows' SQL on PostgreSQL (``db.backends.base.JobsDriver``), in its own dialect on psycopg's cursors:
``%s`` placeholders, lists as arrays (``= ANY(%s)``: one statement text whatever their length, so that psycopg
prepares it once), ``FOR UPDATE SKIP LOCKED`` where several machines' workers claim at once, ``RETURNING``, and
times as ``timestamp with time zone`` (revision 0019) bound and read as aware datetimes."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
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
# the same of an UPDATE ... FROM, whose other relations may have columns of the same names
RETURNING_JOB = "RETURNING " + ", ".join(f"job.{column}" for column in JOB_COLUMNS)


def _time(value: datetime | None) -> datetime | None:
    return value.astimezone(UTC) if value is not None else None  # (in the session's zone, UTC, as UTC)


def _record(row: Row) -> JobRecord:
    return record_of(row, _time)


def _bind(value: object) -> object:
    return value.value if isinstance(value, JobStatus | ErrorKind) else value


def _types(job_types: Collection[JobType]) -> list[str]:
    return sorted(job_type.value for job_type in job_types)


def _values(statuses: Iterable[JobStatus]) -> list[str]:
    return [status.value for status in statuses]


_ACTIVE = "'PENDING', 'PROCESSING'"
_INSERTED = (
    "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, payload, created_at, "
    "updated_at) VALUES (%s, %s, %s, 'PENDING', 0, %s, %s, %s, %s)"
)
_OWNED = "id = %s AND status = 'PROCESSING' AND owner_session = %s AND attempts = %s"
_HELD = (
    "(SELECT 1 FROM async_jobs AS held WHERE held.id = %s AND held.status = 'PROCESSING' "
    "AND held.owner_session = %s AND held.attempts = %s)"
)
_SET_WITH = {
    # run again: one fresh attempt, now, by whichever worker claims it
    JobStatus.PENDING: "max_attempts = CASE WHEN max_attempts > attempts THEN max_attempts ELSE attempts + 1 END, "
    "run_after = NULL, finished_at = NULL, owner_session = NULL, lease_until = NULL",
    JobStatus.CANCELLED: "finished_at = %(now)s, lease_until = NULL",
    JobStatus.FAILED: "finished_at = %(now)s, lease_until = NULL, owner_session = NULL",
    JobStatus.COMPLETED: "finished_at = %(now)s, lease_until = NULL, owner_session = NULL",
}
_RETRIED = "status = 'FAILED' AND error_kind = 'TRANSIENT' AND attempts < max_attempts"


def _owned(claim: Claim) -> tuple[str, str, int]:
    return (claim.job.id, claim.session_id, claim.attempt)


@functools.cache
def _finish_sql(columns: tuple[str, ...], spend_attempt: bool, look: bool) -> str:
    """``finish``'s statement for the columns it sets (a handful of kinds of finish: each made once)."""
    assert set(columns) <= set(JOB_COLUMNS), columns
    sets = ["updated_at = %s", *(f"{column} = %s" for column in columns)]
    if not spend_attempt:
        sets.append("attempts = attempts - 1")
    return f"UPDATE async_jobs SET {', '.join(sets)} WHERE {_OWNED} RETURNING {_HELD if look else 'NULL'}"


class PostgresJobs:
    """The job rows' SQL of a library on a PostgreSQL server (``engine``'s)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    # --- cursors ------------------------------------------------------------------------------

    @contextmanager
    def cursor_in(self, conn: sa.Connection) -> Iterator[Any]:
        cursor: Any = conn.connection.cursor()
        try:
            try:
                yield cursor
            finally:
                cursor.close()
        except BaseException:
            # A connection the server dropped under this cursor (SQLAlchemy ran no statement, so it does not know)
            # leaves the pool rather than being reset there: the pool's rollback would fail, logged as an error.
            if getattr(conn.connection.dbapi_connection, "broken", False):
                conn.invalidate()
            raise

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self.engine.connect() as conn:
            with self.cursor_in(conn) as cursor:
                yield cursor
            # The read's transaction ends here rather than in the pool's reset: a connection the server ended
            # since it answered (it stopped) then leaves the pool quietly, where the reset's failure was logged as
            # an error with its traceback. The read has its rows; the next one meets the server's absence.
            try:
                conn.connection.dbapi_connection.rollback()  # type: ignore[union-attr]
            except psycopg.Error:
                conn.invalidate()

    # --- enqueue ------------------------------------------------------------------------------

    def insert(self, cursor: Any, job: JobRecord) -> bool:
        # the partial unique index on active jobs decides, with no savepoint around the statement
        cursor.execute(
            f"{_INSERTED} ON CONFLICT (target_id, job_type) WHERE status IN ({_ACTIVE}) DO NOTHING",
            (job.id, job.job_type.value, job.target_id, job.max_attempts, job.payload, job.created_at, job.created_at),
        )
        return bool(cursor.rowcount)

    def insert_many(self, cursor: Any, jobs: Sequence[JobRecord]) -> None:
        # one statement of arrays, not one per job
        cursor.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, payload, created_at, "
            "updated_at) SELECT id, job_type, target_id, 'PENDING', 0, max_attempts, payload, created_at, created_at "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[], %s::text[], %s::timestamptz[]) "
            "AS new (id, job_type, target_id, max_attempts, payload, created_at)",
            (
                [job.id for job in jobs],
                [job.job_type.value for job in jobs],
                [job.target_id for job in jobs],
                [job.max_attempts for job in jobs],
                [job.payload for job in jobs],
                [job.created_at for job in jobs],
            ),
        )

    def active_job_id(self, cursor: Any, job_type: JobType, target_id: str) -> str | None:
        row = cursor.execute(
            f"SELECT id FROM async_jobs WHERE job_type = %s AND target_id = %s AND status IN ({_ACTIVE})",
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
        """One statement: the SELECT locks the jobs it picks and passes over those another transaction is taking
        (two machines' claims never wait for each other nor take the same job), and the UPDATE starts them, each
        with one of the run ids made here beforehand (time-ordered UUIDv7, which SQL cannot make)."""
        runs = [new_id() for _ in range(limit)]
        rows = cursor.execute(
            "WITH picked AS (SELECT id FROM async_jobs WHERE status = 'PENDING' AND job_type = ANY(%s) "
            "AND (run_after IS NULL OR run_after <= %s) ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED), "
            "numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM picked) "
            "UPDATE async_jobs AS job SET status = 'PROCESSING', owner_session = %s, attempts = job.attempts + 1, "
            "lease_until = %s, started_at = %s, updated_at = %s, run_after = NULL, run_id = (%s::text[])[numbered.n] "
            f"FROM numbered WHERE job.id = numbered.id {RETURNING_JOB}",
            (_types(job_types), now, limit, session_id, lease_until, now, now, runs),
        ).fetchall()
        # (RETURNING keeps no order)
        return sorted(map(_record, rows), key=lambda record: record.id)

    def still_owned(self, cursor: Any, claim: Claim) -> bool:
        return cursor.execute(f"SELECT 1 FROM async_jobs WHERE {_OWNED}", _owned(claim)).fetchone() is not None

    def renew_leases(self, cursor: Any, claims: Iterable[Claim], lease_until: datetime) -> set[str]:
        held = list(claims)
        rows = cursor.execute(
            "UPDATE async_jobs AS job SET lease_until = %s "
            "FROM unnest(%s::text[], %s::text[], %s::int[]) AS claimed (id, session_id, attempt) "
            "WHERE job.id = claimed.id AND job.status = 'PROCESSING' AND job.owner_session = claimed.session_id "
            "AND job.attempts = claimed.attempt RETURNING job.id",
            (
                lease_until,
                [claim.job.id for claim in held],
                [claim.session_id for claim in held],
                [claim.attempt for claim in held],
            ),
        ).fetchall()
        return {row[0] for row in rows}

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
            (now, *map(_bind, values.values()), *_owned(claim), *(_owned(held) if held is not None else ())),
        ).fetchall()
        if not found:
            return False, None
        return True, (found[0][0] is not None) if held is not None else None

    def record_attempt(
        self, cursor: Any, claim: Claim, outcome: AttemptOutcome, error_text: str | None, now: datetime
    ) -> None:
        cursor.execute(
            f"INSERT INTO job_attempts ({ATTEMPT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO NOTHING",
            (claim.attempt_id, claim.job.id, claim.attempt, claim.run_id, claim.session_id, claim.pool.value,
             claim.job.started_at or now, now, outcome.value, error_text),
        )  # fmt: skip

    def wake(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> list[JobRecord]:
        rows = cursor.execute(
            "UPDATE async_jobs SET run_after = NULL, updated_at = %s WHERE status = 'PENDING' "
            f"AND job_type = ANY(%s) AND run_after > %s {RETURNING}",
            (now, _types(job_types), now),
        ).fetchall()
        return [_record(row) for row in rows]

    # --- moving jobs between statuses --------------------------------------------------------------

    def transition(
        self, cursor: Any, job_ids: Sequence[str], new: JobStatus, sources: Sequence[JobStatus], now: datetime
    ) -> list[tuple[JobRecord, JobStatus]]:
        """The jobs are locked as they are read, so the status each is said to have come from is the one it had."""
        if new is JobStatus.PROCESSING:
            raise ValueError("only a claim starts a job: it starts the attempt and takes the lease")
        chosen = ""
        if new is JobStatus.PENDING:
            chosen = (
                "AND old.id IN (SELECT max(id) FROM old GROUP BY job_type, target_id) "
                "AND NOT EXISTS (SELECT 1 FROM async_jobs AS queued WHERE queued.job_type = job.job_type "
                f"AND queued.target_id = job.target_id AND queued.status IN ({_ACTIVE}) AND queued.id <> job.id)"
            )
        rows = cursor.execute(
            "WITH old AS (SELECT id, status, job_type, target_id FROM async_jobs "
            "WHERE id = ANY(%(ids)s) AND status = ANY(%(sources)s) FOR UPDATE) "
            f"UPDATE async_jobs AS job SET status = %(new)s, updated_at = %(now)s, {_SET_WITH[new]} "
            f"FROM old WHERE job.id = old.id {chosen} {RETURNING_JOB}, old.status",
            {"ids": list(job_ids), "sources": _values(sources), "new": new.value, "now": now},
        ).fetchall()
        return [(_record(row[:-1]), STATUSES[row[-1]]) for row in rows]

    def ids_of_targets(self, cursor: Any, target_ids: Sequence[str], statuses: Sequence[JobStatus]) -> list[str]:
        rows = cursor.execute(
            "SELECT id FROM async_jobs WHERE target_id = ANY(%s) AND status = ANY(%s)",
            (list(target_ids), _values(statuses)),
        ).fetchall()
        return [row[0] for row in rows]

    def delete_of_targets(self, cursor: Any, target_ids: Sequence[str], keep: Collection[str]) -> int:
        cursor.execute(
            "DELETE FROM async_jobs WHERE target_id = ANY(%s) AND NOT (id = ANY(%s))", (list(target_ids), list(keep))
        )
        return int(cursor.rowcount)

    # --- upkeep -------------------------------------------------------------------------------------

    def orphans(self, cursor: Any, live_session: str, now: datetime, *, limit: int | None = None) -> list[JobRecord]:
        """Locked as they are read, passing over those another machine's sweep is taking back: two sweeps never
        record one interruption twice."""
        rows = cursor.execute(
            f"SELECT {SELECTED} FROM async_jobs WHERE status = 'PROCESSING' AND (owner_session IS NULL "
            "OR owner_session NOT IN (SELECT id FROM app_sessions WHERE ended_at IS NULL) "
            "OR (owner_session <> %s AND lease_until < %s)) ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED",
            (live_session, now, limit),
        ).fetchall()
        return [_record(row) for row in rows]

    def interrupt(self, cursor: Any, job: JobRecord, now: datetime, text: str) -> int:
        cursor.execute(  # (a row opened by a version that wrote one at every claim)
            "UPDATE job_attempts SET outcome = 'INTERRUPTED', ended_at = %s, error_text = %s "
            "WHERE job_id = %s AND outcome IS NULL",
            (now, text, job.id),
        )
        if not cursor.rowcount:  # the attempt was the job row's own: it joins the history
            cursor.execute(
                f"INSERT INTO job_attempts ({ATTEMPT_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'INTERRUPTED', %s)",
                (new_id(), job.id, job.attempts, job.run_id or "", job.owner_session or "", job.pool.value,
                 job.started_at or now, now, text),
            )  # fmt: skip
        row = cursor.execute(
            "SELECT count(*) FROM job_attempts WHERE job_id = %s AND outcome = 'INTERRUPTED'", (job.id,)
        ).fetchone()
        return int(row[0])

    def resume(self, cursor: Any, job: JobRecord, now: datetime, failed: str | None) -> JobRecord | None:
        params: tuple[object, ...]
        if failed is None:  # an interruption is not the job's fault: it spends no attempt
            sets, params = "status = 'PENDING', attempts = greatest(attempts - 1, 0)", (now,)
        else:
            sets = "status = 'FAILED', finished_at = %s, error_message = %s, error_kind = 'PERMANENT'"
            params = (now, now, failed)
        row = cursor.execute(
            "UPDATE async_jobs SET updated_at = %s, owner_session = NULL, lease_until = NULL, run_after = NULL, "
            # still the attempt found: another machine's sweep may have ended it, and it been claimed again
            f"{sets} WHERE id = %s AND status = 'PROCESSING' AND owner_session IS NOT DISTINCT FROM %s "
            f"AND attempts = %s {RETURNING}",
            (*params, job.id, job.owner_session, job.attempts),
        ).fetchone()
        return _record(row) if row is not None else None

    def stalled(self, cursor: Any, live_session: str, started_before: datetime, now: datetime) -> list[str]:
        rows = cursor.execute(
            "SELECT id FROM async_jobs WHERE status = 'PROCESSING' AND owner_session = %s "
            "AND (started_at < %s OR lease_until < %s)",
            (live_session, started_before, now),
        ).fetchall()
        return [row[0] for row in rows]

    def overdue(self, cursor: Any, before: datetime, limit: int) -> list[str]:
        rows = cursor.execute(
            "SELECT id FROM async_jobs WHERE status = 'PENDING' AND coalesce(run_after, created_at) < %s LIMIT %s",
            (before, limit),
        ).fetchall()
        return [row[0] for row in rows]

    def retry_transient_failures(self, cursor: Any, now: datetime) -> list[JobRecord]:
        rows = cursor.execute(
            "UPDATE async_jobs SET status = 'PENDING', finished_at = NULL, run_after = NULL, updated_at = %s "
            f"WHERE {_RETRIED} AND NOT EXISTS (SELECT 1 FROM async_jobs AS other "
            "WHERE other.job_type = async_jobs.job_type AND other.target_id = async_jobs.target_id "
            f"AND other.id <> async_jobs.id AND (other.id > async_jobs.id OR other.status IN ({_ACTIVE}))) "
            f"{RETURNING}",
            (now,),
        ).fetchall()
        return [_record(row) for row in rows]

    def prune(self, cursor: Any, completed_before: datetime, failed_before: datetime | None, limit: int) -> int:
        ended = "coalesce(finished_at, updated_at)"
        old = f"(status = 'COMPLETED' AND {ended} < %s)"
        params: tuple[object, ...] = (completed_before,)
        if failed_before is not None:
            old += f" OR (status IN ('FAILED', 'CANCELLED') AND {ended} < %s AND NOT ({_RETRIED}))"
            params += (failed_before,)
        cursor.execute(
            f"DELETE FROM async_jobs WHERE id IN (SELECT id FROM async_jobs WHERE {old} LIMIT %s)", (*params, limit)
        )
        return int(cursor.rowcount)

    # --- reading ----------------------------------------------------------------------------------

    def get(self, cursor: Any, job_id: str) -> JobRecord | None:
        row = cursor.execute(f"SELECT {SELECTED} FROM async_jobs WHERE id = %s", (job_id,)).fetchone()
        return _record(row) if row is not None else None

    def attempts(self, cursor: Any, job_id: str) -> list[AttemptRecord]:
        rows = cursor.execute(
            f"SELECT {ATTEMPT_COLUMNS} FROM job_attempts WHERE job_id = %s ORDER BY started_at", (job_id,)
        ).fetchall()
        return [attempt_of(row, _time) for row in rows]

    def changed_since(self, cursor: Any, since: datetime, limit: int, after_id: str) -> list[JobRecord]:
        rows = cursor.execute(
            f"SELECT {SELECTED} FROM async_jobs WHERE updated_at >= %s "
            "AND (updated_at > %s OR id > %s) ORDER BY updated_at, id LIMIT %s",
            (since, since, after_id, limit),
        ).fetchall()
        return [_record(row) for row in rows]

    def jobs_named(self, cursor: Any, ids: Sequence[str]) -> list[JobRecord]:
        rows = cursor.execute(f"SELECT {SELECTED} FROM async_jobs WHERE id = ANY(%s)", (list(ids),)).fetchall()
        return [_record(row) for row in rows]

    def has_runnable(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> bool:
        row = cursor.execute(
            "SELECT 1 FROM async_jobs WHERE status = 'PENDING' AND job_type = ANY(%s) "
            "AND (run_after IS NULL OR run_after <= %s) LIMIT 1",
            (_types(job_types), now),
        ).fetchone()
        return row is not None

    def waiting_summary(
        self, cursor: Any, job_types: Collection[JobType], now: datetime
    ) -> tuple[int, datetime] | None:
        count, first = cursor.execute(
            "SELECT count(*), min(run_after) FROM async_jobs WHERE status = 'PENDING' AND job_type = ANY(%s) "
            "AND run_after > %s",
            (_types(job_types), now),
        ).fetchone()
        due = _time(first)
        if not count or due is None:
            return None
        return int(count), due
