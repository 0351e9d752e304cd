"""One table decides every change of a job's status (``queue.transitions``): the store moves only the jobs still
in a source status; a retry or cancel of one job is the bulk action of one id. (Each (from, to) pair allowed or
refused through the store: the conformance suite, on both backends.)"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.db.models import AsyncJob
from san_desktop.queue.errors import DuplicateJobError, JobStateError
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore


def _job_in(queue: JobStore, status: JobStatus, target: str = "t") -> JobRecord:
    job = queue.enqueue(JobType.CARD_ANALYSIS, target)
    with queue.db.write() as session:
        session.execute(sa.update(AsyncJob).where(AsyncJob.id == job.id).values(status=status))
    return queue.get(job.id)


def test_the_store_moves_only_jobs_still_in_a_source_status(queue: JobStore) -> None:
    waiting = _job_in(queue, JobStatus.PENDING, "a")
    done = _job_in(queue, JobStatus.COMPLETED, "b")
    result = queue.transition([waiting.id, done.id], JobStatus.CANCELLED)
    assert [job.id for job in result.changed] == [waiting.id]
    assert result.skipped == 1
    assert queue.get(done.id).status is JobStatus.COMPLETED


def test_retry_and_cancel_of_one_job_are_the_bulk_actions_of_one_id(queue: JobStore) -> None:
    """The same rows come out of both (only a single one says why it did nothing)."""
    one, many = _job_in(queue, JobStatus.FAILED, "one"), _job_in(queue, JobStatus.FAILED, "many")
    single = queue.retry(one.id)
    bulk = queue.retry_jobs([many.id]).changed[0]
    columns = ("status", "attempts", "max_attempts", "run_after", "owner_session", "lease_until")

    def written(job: JobRecord) -> dict[str, object]:
        return {column: getattr(job, column) for column in columns} | {"finished": job.finished_at is not None}

    assert written(single) == written(bulk)
    single, bulk = queue.cancel(one.id), queue.cancel_jobs([many.id]).changed[0]
    assert written(single) == written(bulk)
    assert single.status is JobStatus.CANCELLED
    # what the bulk action skips, the single one explains
    assert queue.cancel_jobs([one.id]).skipped == 1
    with pytest.raises(JobStateError, match="only waiting or running jobs can be cancelled"):
        queue.cancel(one.id)
    queue.enqueue(JobType.CARD_ANALYSIS, "one")  # the same work is queued again meanwhile
    assert queue.retry_jobs([one.id]).skipped == 1
    with pytest.raises(DuplicateJobError):
        queue.retry(one.id)
