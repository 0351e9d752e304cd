"""The job store's cursors and reads (``queue.store.JobStore`` is made of these): a cursor in a write of its own
or in a caller's transaction, and the jobs and attempts as they are now."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from san_desktop.core.enums import JOB_POOLS, AttemptOutcome, JobStatus
from san_desktop.db.database import Database, SessionOrConnection
from san_desktop.queue.errors import JobNotFoundError
from san_desktop.queue.records import AttemptRecord, JobRecord

if TYPE_CHECKING:
    from san_desktop.db.backends.base import JobsDriver


class JobCursors:
    """Where the job store's statements run: ``db``'s jobs driver (``jobs``), on the cursors it hands out."""

    db: Database
    jobs: JobsDriver

    @contextmanager
    def _pooled(self) -> Iterator[Any]:
        """A cursor in a write transaction of its own on a connection of the pool, which is looked at before use:
        for the writes that are not a worker's (an enqueue from the command line, a wake, a take-back), so that
        the first after a server restarted goes through rather than failing on the workers' kept connection."""
        with self.db.write_connection() as connection, self.jobs.cursor_in(connection) as cursor:
            yield cursor

    @contextmanager
    def _cursor_in(self, session: SessionOrConnection) -> Iterator[Any]:
        """A cursor in the caller's open transaction (an ORM session's or a Core connection's)."""
        connection = session if isinstance(session, sa.Connection) else session.connection()
        with self.jobs.cursor_in(connection) as cursor:
            yield cursor


class JobReads(JobCursors):
    """The jobs and their attempts as they are now, read outside any write."""

    def get(self, job_id: str) -> JobRecord:
        with self.jobs.reading() as cursor:
            job = self.jobs.get(cursor, job_id)
        if job is None:
            raise JobNotFoundError(job_id)
        return job

    def attempts(self, job_id: str) -> list[AttemptRecord]:
        """Every attempt of the job, oldest first: those that did not succeed (their rows), then the job's
        own current attempt when it runs or succeeded (as River keeps them: the row is its attempt)."""
        with self.jobs.reading() as cursor:
            job = self.jobs.get(cursor, job_id)
            if job is None:
                raise JobNotFoundError(job_id)
            found = self.jobs.attempts(cursor, job_id)
        if job.status in (JobStatus.PROCESSING, JobStatus.COMPLETED) and job.started_at is not None:
            succeeded = job.status is JobStatus.COMPLETED
            found.append(
                AttemptRecord(
                    id=job.id,
                    job_id=job.id,
                    attempt=job.attempts,
                    run_id=job.run_id or "",
                    session_id=job.owner_session or "",
                    pool=JOB_POOLS[job.job_type],
                    started_at=job.started_at,
                    ended_at=job.finished_at if succeeded else None,
                    outcome=AttemptOutcome.SUCCEEDED if succeeded else None,
                    error_text=None,
                )
            )
        return found

    def changed_since(self, since: datetime, limit: int = 500, after_id: str = "") -> list[JobRecord]:
        """Jobs changed after ``since``, oldest change first, a page of ``limit``; the next page: ``since`` and
        ``after_id`` of the last one read."""
        with self.jobs.reading() as cursor:
            return self.jobs.changed_since(cursor, since, limit, after_id)

    def jobs_named(self, ids: Iterable[str], chunk: int = 500) -> list[JobRecord]:
        """The jobs of ``ids`` as they are now (those that still exist: pruned ones are not), in no order."""
        wanted = list(ids)
        with self.jobs.reading() as cursor:
            chunks = (wanted[start : start + chunk] for start in range(0, len(wanted), chunk))
            return [job for part in chunks if part for job in self.jobs.jobs_named(cursor, part)]
