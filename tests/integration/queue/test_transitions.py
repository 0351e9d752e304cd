"""One table decides every change of a job's status (``queue.transitions``): each (from, to) pair is allowed
or refused through the store as the table says; a retry or cancel of one job is the bulk action of one id."""

from __future__ import annotations

import itertools

import pytest
import sqlalchemy as sa

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.db.models import AsyncJob
from san_desktop.queue.errors import DuplicateJobError, JobStateError
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.queue.transitions import JOB_TRANSITIONS, IllegalJobTransitionError, check_job_transition


def _job_in(queue: JobStore, status: JobStatus, target: str = "t") -> JobRecord:
    job = queue.enqueue(JobType.CARD_ANALYSIS, target)
    with queue.db.write() as session:
        session.execute(sa.update(AsyncJob).where(AsyncJob.id == job.id).values(status=status))
    return queue.get(job.id)


@pytest.mark.parametrize(("old", "new"), list(itertools.product(JobStatus, JobStatus)))
def test_every_pair_is_allowed_or_refused_through_the_store_as_the_table_says(
    queue: JobStore, backend: Backend, old: JobStatus, new: JobStatus
) -> None:
    job = _job_in(queue, old, target=f"{old}-{new}")
    allowed = new in JOB_TRANSITIONS[old]
    if new is JobStatus.PROCESSING:  # only a claim starts a job
        claim = queue.claim_next(backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
        assert (claim is not None and claim.job.id == job.id) is allowed
        return
    if not allowed:
        with pytest.raises(IllegalJobTransitionError):
            check_job_transition(old, new)
        with pytest.raises(IllegalJobTransitionError):
            queue.transition([job.id], new, from_statuses={old})
        assert queue.get(job.id).status is old  # nothing written
        return
    result = queue.transition([job.id], new, from_statuses={old})
    assert [changed.id for changed in result.changed] == [job.id]
    assert queue.get(job.id).status is new


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
