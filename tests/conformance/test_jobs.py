"""The job store on each backend (``queue.store.JobStore`` over ``db.backend.jobs``): enqueue with one active
job per work, claims oldest first with their leases and never one job twice, leases renewed only for their
own claims, finishing, failing and interrupting an attempt, every pair of statuses as the status table says,
pruning, and the jobs of purged targets deleted."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.db.database import Database
from san_desktop.queue.errors import DuplicateJobError, JobSupersededError
from san_desktop.queue.records import Claim, Classification, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.queue.transitions import JOB_TRANSITIONS, IllegalJobTransitionError
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings

AI_JOBS = frozenset({JobType.CARD_ANALYSIS})
WAIT_SECONDS = 30  # a bound, not a pace


class _Clock:
    """The library's clock, moved on by hand (what prune and leases are measured against)."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return self.clock() + self.ahead


@pytest.fixture
def clock(library: Database) -> _Clock:
    return _Clock(library.backend.clock)


@pytest.fixture
def store(library: Database, clock: _Clock) -> JobStore:
    return JobStore(library, fast_settings(lease_seconds=60.0, max_attempts=2), clock=clock)


@pytest.fixture
def worker(library: Database) -> str:
    return start_session(library, "headless")


def _claim(store: JobStore, worker: str, limit: int = 1) -> list[Claim]:
    return store.claim_batch(worker, JobPool.AI, AI_JOBS, limit)


def test_one_job_of_a_work_is_active_at_a_time(store: JobStore, worker: str) -> None:
    first = store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert first.status is JobStatus.PENDING
    with pytest.raises(DuplicateJobError) as refused:
        store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert refused.value.existing_job_id == first.id
    other_work = store.enqueue(JobType.SCRAP_REFINE, "scrap-1")  # another type of work on the same target
    (claim,) = _claim(store, worker)
    store.complete(claim)
    again = store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")  # the first is done: asking again makes a new job
    assert {first.id, other_work.id, again.id} == {
        job.id for job in store.jobs_named([first.id, other_work.id, again.id])
    }


def test_claims_take_the_oldest_first_each_with_its_lease_and_attempt(
    store: JobStore, worker: str, clock: _Clock
) -> None:
    enqueued = [store.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}").id for n in range(5)]
    before = clock()
    first = _claim(store, worker, 3)
    assert [claim.job.id for claim in first] == enqueued[:3]
    for claim in first:
        job = store.get(claim.job.id)
        assert (job.status, job.owner_session, job.attempts) == (JobStatus.PROCESSING, worker, 1)
        assert job.lease_until is not None
        assert before + timedelta(seconds=59) <= job.lease_until <= clock() + timedelta(seconds=61)
    assert [claim.job.id for claim in _claim(store, worker, 3)] == enqueued[3:]
    assert _claim(store, worker, 3) == []


def test_two_workers_claiming_at_once_never_take_one_job_twice(library: Database, store: JobStore) -> None:
    enqueued = {store.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}").id for n in range(40)}
    workers = [start_session(library, "headless") for _ in range(2)]
    taken: dict[str, list[str]] = {worker: [] for worker in workers}
    start = threading.Barrier(2)

    def drain(worker: str) -> None:
        start.wait(WAIT_SECONDS)
        while claimed := _claim(store, worker, 3):
            taken[worker].extend(claim.job.id for claim in claimed)

    threads = [threading.Thread(target=drain, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS)
    every = [job_id for ids in taken.values() for job_id in ids]
    assert sorted(every) == sorted(enqueued)  # each once


def test_a_lease_is_renewed_only_while_the_job_is_its_claims(store: JobStore, worker: str, clock: _Clock) -> None:
    ids = [store.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}").id for n in range(2)]
    kept, cancelled = _claim(store, worker, 2)
    store.cancel(cancelled.job.id)
    clock.ahead = timedelta(seconds=30)
    assert store.renew_leases([kept, cancelled]) == {ids[0]}
    lease = store.get(ids[0]).lease_until
    assert lease is not None
    assert lease >= clock() + timedelta(seconds=59)
    assert store.extend_lease(cancelled) is None
    assert store.holds(kept)
    assert not store.holds(cancelled)


def test_a_completed_job_stays_completed_and_a_late_result_is_dropped(store: JobStore, worker: str) -> None:
    store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    (claim,) = _claim(store, worker)
    done = store.complete(claim)
    assert (done.status, done.lease_until, store.get(done.id).status) == (
        JobStatus.COMPLETED,
        None,
        JobStatus.COMPLETED,
    )
    assert done.finished_at is not None
    with pytest.raises(JobSupersededError):
        store.complete(claim)  # its worker's second word on it changes nothing
    assert store.fail(claim, RuntimeError("late"), Classification(ErrorKind.PERMANENT)) is None
    assert store.get(done.id).status is JobStatus.COMPLETED
    # (the dropped words are one record of the attempt: it was dropped)
    assert [attempt.outcome for attempt in store.attempts(done.id)] == [
        AttemptOutcome.DISCARDED,
        AttemptOutcome.SUCCEEDED,
    ]


def test_a_transient_failure_waits_to_run_again_until_its_attempts_are_spent(
    store: JobStore, worker: str, clock: _Clock
) -> None:
    job = store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    (claim,) = _claim(store, worker)
    waiting = store.fail(claim, TimeoutError("the server was slow"), Classification(ErrorKind.TRANSIENT))
    assert waiting is not None
    assert waiting.status is JobStatus.PENDING
    assert waiting.run_after is not None
    assert waiting.run_after > claim.job.updated_at
    assert store.get(job.id).error_message is not None
    clock.ahead = timedelta(seconds=1)  # past the (scaled down) backoff
    (second,) = _claim(store, worker)
    assert second.attempt == 2
    failed = store.fail(second, TimeoutError("slow again"), Classification(ErrorKind.TRANSIENT))
    assert failed is not None
    assert failed.status is JobStatus.FAILED
    assert [attempt.outcome for attempt in store.attempts(job.id)] == [
        AttemptOutcome.RETRY_SCHEDULED,
        AttemptOutcome.FAILED,
    ]


def test_an_interrupted_attempt_gives_its_job_back_without_spending_it(store: JobStore, worker: str) -> None:
    job = store.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    (claim,) = _claim(store, worker)
    back = store.release(claim, "the app is closing")
    assert back is not None
    assert (back.status, back.owner_session, back.lease_until, back.attempts) == (JobStatus.PENDING, None, None, 0)
    (again,) = _claim(store, worker)
    assert (again.job.id, again.attempt) == (job.id, 1)
    assert [attempt.outcome for attempt in store.attempts(job.id)][:1] == [AttemptOutcome.INTERRUPTED]


def _job_in(store: JobStore, worker: str, status: JobStatus, target: str) -> JobRecord:
    job = store.enqueue(JobType.CARD_ANALYSIS, target)
    if status is JobStatus.PENDING:
        return job
    if status is JobStatus.CANCELLED:
        return store.cancel(job.id)
    (claim,) = [claim for claim in _claim(store, worker, 10) if claim.job.id == job.id]
    if status is JobStatus.COMPLETED:
        return store.complete(claim)
    if status is JobStatus.FAILED:
        failed = store.fail(claim, ValueError("bad"), Classification(ErrorKind.PERMANENT))
        assert failed is not None
        return failed
    return claim.job


@pytest.mark.parametrize("old", list(JobStatus))
@pytest.mark.parametrize("new", list(JobStatus))
def test_every_pair_of_statuses_is_allowed_or_refused_as_the_table_says(
    store: JobStore, worker: str, old: JobStatus, new: JobStatus
) -> None:
    job = _job_in(store, worker, old, f"scrap-{old.value}-{new.value}")
    assert store.get(job.id).status is old
    allowed = new in JOB_TRANSITIONS[old]
    if new is JobStatus.PROCESSING:  # only a claim starts a job
        assert [claim.job.id for claim in _claim(store, worker)] == ([job.id] if allowed else [])
    elif allowed:
        moved = store.transition([job.id], new, from_statuses={old})
        assert [record.id for record in moved.changed] == [job.id]
        assert store.get(job.id).status is new
    else:
        with pytest.raises(IllegalJobTransitionError):
            store.transition([job.id], new, from_statuses={old})
        assert store.get(job.id).status is old  # refused before anything was written


def test_pruning_deletes_finished_jobs_past_their_keeping(
    library: Database, store: JobStore, worker: str, clock: _Clock
) -> None:
    done = _job_in(store, worker, JobStatus.COMPLETED, "scrap-done")
    failed = _job_in(store, worker, JobStatus.FAILED, "scrap-failed")
    waiting = _job_in(store, worker, JobStatus.PENDING, "scrap-waiting")
    with library.write() as session:
        assert store.prune(session, 100) == 0  # finished just now: kept
    clock.ahead = timedelta(days=store.settings.keep_completed_days + 1)
    with library.write() as session:
        pruned = store.prune(session, 100)
    left = {job.id for job in store.jobs_named([done.id, failed.id, waiting.id])}
    assert done.id not in left
    assert waiting.id in left
    assert pruned == 3 - len(left)


def test_the_jobs_of_purged_targets_go_and_a_running_one_is_cancelled_for_its_worker(
    library: Database, store: JobStore, worker: str
) -> None:
    running = _job_in(store, worker, JobStatus.PROCESSING, "scrap-running")  # (claimed before the others wait)
    waiting = _job_in(store, worker, JobStatus.PENDING, "scrap-purged")
    other = _job_in(store, worker, JobStatus.PENDING, "scrap-kept")
    with library.write() as session:
        deleted = store.delete_jobs_of(session, ["scrap-purged", "scrap-running"])
    assert deleted == 1
    assert {job.id: job.status for job in store.jobs_named([waiting.id, running.id, other.id])} == {
        running.id: JobStatus.CANCELLED,
        other.id: JobStatus.PENDING,
    }
