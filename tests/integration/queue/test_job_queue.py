"""The queue: enqueue (own or caller's transaction), duplicates, claim, finish, retry policy."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.errors import TargetNotFoundError, TransientError
from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AsyncJob
from san_desktop.jobs.breaker import BreakerState, CircuitBreaker
from san_desktop.jobs.classify import TRANSIENT
from san_desktop.jobs.executor import MAX_BATCH, JobExecutor
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.queue.errors import DuplicateJobError, JobNotFoundError, JobStateError
from san_desktop.queue.records import Claim, JobEvent, NextClaim
from san_desktop.queue.store import JobStore
from tests.support.clock import FakeClock
from tests.support.jobs import RecordingProcessor, jobs_of

AI_TYPES = frozenset({JobType.CARD_ANALYSIS})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def clocked_queue(backend: Backend, job_settings: JobSettings, clock: FakeClock) -> JobStore:
    return JobStore(backend.db, job_settings, clock=clock, jitter=lambda: 0.5)


def _executor(queue: JobStore, backend: Backend, processor: Callable[[JobContext], None]) -> JobExecutor:
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, processor)
    return JobExecutor(queue, registry, backend.require_session(), breakers={})


def _run_one(queue: JobStore, executor: JobExecutor, session_id: str) -> None:
    claim = queue.claim_next(session_id, JobPool.AI, AI_TYPES)
    assert claim is not None
    executor.run(claim)


# --- enqueue ----------------------------------------------------------------------------------


def test_enqueue_announces_the_new_job_after_commit(queue: JobStore) -> None:
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert [(e.job_id, e.old_status, e.new_status) for e in events] == [(job.id, None, JobStatus.PENDING)]
    assert queue.get(job.id).status is JobStatus.PENDING
    assert job.max_attempts == 3


def test_enqueue_in_the_callers_transaction_is_announced_only_when_it_commits(
    queue: JobStore, backend: Backend
) -> None:
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    with backend.db.write() as session:
        job = queue.enqueue(JobType.TIL_GENERATION, "summary-1", session=session)
        assert events == []  # not before commit: a runner must not see an uncommitted job
        with backend.db.sessions() as other:
            assert other.get(AsyncJob, job.id) is None
    assert [e.job_id for e in events] == [job.id]


def test_enqueue_in_a_rolled_back_transaction_leaves_nothing(queue: JobStore, backend: Backend) -> None:
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    with pytest.raises(RuntimeError), backend.db.write() as session:
        queue.enqueue(JobType.TIL_GENERATION, "summary-1", session=session)
        raise RuntimeError("the caller's work failed")
    assert events == []
    assert len(jobs_of(queue)) == 0


def test_new_targets_jobs_are_enqueued_together_and_announced_once_committed(queue: JobStore, backend: Backend) -> None:
    """An import's chunk: its scraps' jobs in one statement, announced together after its commit."""
    batches: list[list[str]] = []
    queue.add_listener(lambda event: batches.append([event.job_id]))
    wanted = [(JobType.CARD_ANALYSIS, "scrap-1"), (JobType.SCRAP_REFINE, "scrap-1"), (JobType.PAGE_FETCH, "scrap-2")]
    with backend.db.write_connection() as connection:
        records = queue.enqueue_new(connection, wanted)
        assert batches == []  # not before commit
    assert [(record.job_type, record.target_id) for record in records] == wanted
    assert [batch[0] for batch in batches] == [record.id for record in records]
    assert sorted((job.job_type, job.target_id, job.status) for job in jobs_of(queue)) == sorted(
        (job_type, target, JobStatus.PENDING) for job_type, target in wanted
    )
    with pytest.raises(RuntimeError), backend.db.write_connection() as connection:
        queue.enqueue_new(connection, [(JobType.CARD_ANALYSIS, "scrap-3")])
        raise RuntimeError("the chunk failed")
    assert len(batches) == 3  # nothing announced of a rolled-back chunk
    assert len(jobs_of(queue)) == 3
    assert queue.enqueue_new(connection, []) == []


def test_duplicate_names_the_active_job_and_keeps_the_callers_transaction(queue: JobStore, backend: Backend) -> None:
    first = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    with backend.db.write() as session:
        with pytest.raises(DuplicateJobError) as duplicate:
            queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1", session=session)
        other = queue.enqueue(JobType.SCRAP_REFINE, "scrap-1", session=session)
    assert duplicate.value.existing_job_id == first.id
    assert first.id in str(duplicate.value)
    assert queue.get(other.id).status is JobStatus.PENDING


def test_duplicate_race_between_threads_leaves_one_active_job(queue: JobStore) -> None:
    barrier = threading.Barrier(8)
    created: list[str] = []
    duplicates: list[str] = []
    unexpected: list[BaseException] = []
    lock = threading.Lock()

    def attempt() -> None:
        barrier.wait()
        try:
            job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-race")
            with lock:
                created.append(job.id)
        except DuplicateJobError as exc:
            with lock:
                duplicates.append(exc.existing_job_id)
        except BaseException as exc:
            with lock:
                unexpected.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert unexpected == []
    assert len(created) == 1
    assert duplicates == created * 7
    assert len(jobs_of(queue, statuses=(JobStatus.PENDING,))) == 1


def test_finished_jobs_never_block_a_new_enqueue(queue: JobStore, backend: Backend) -> None:
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = queue.claim_next(backend.require_session(), JobPool.AI, AI_TYPES)
    assert claim is not None
    queue.complete(claim)
    again = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert again.id != job.id


# --- claim and finish -------------------------------------------------------------------------


def test_claim_takes_the_oldest_runnable_job_of_the_pool(queue: JobStore, backend: Backend) -> None:
    commit = queue.enqueue(JobType.TIL_GITHUB_COMMIT, "commit-1")
    first = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")
    claim = queue.claim_next(backend.require_session(), JobPool.AI, AI_TYPES)
    assert claim is not None
    assert claim.job.id == first.id
    assert claim.job.status is JobStatus.PROCESSING
    assert claim.job.owner_session == backend.require_session()
    assert claim.attempt == 1
    github = queue.claim_next(backend.require_session(), JobPool.GITHUB, {JobType.TIL_GITHUB_COMMIT})
    assert github is not None
    assert github.job.id == commit.id
    attempts = queue.attempts(first.id)
    assert [(a.attempt, a.outcome, a.pool) for a in attempts] == [(1, None, JobPool.AI)]


def test_a_late_worker_cannot_overwrite_a_newer_state(queue: JobStore, backend: Backend) -> None:
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = queue.claim_next(backend.require_session(), JobPool.AI, AI_TYPES)
    assert claim is not None
    queue.cancel(job.id)  # meanwhile the user cancelled it
    assert queue.fail(claim, TimeoutError("late"), TRANSIENT) is None
    with pytest.raises(Exception, match=job.id):
        queue.complete(claim)
    assert queue.get(job.id).status is JobStatus.CANCELLED
    assert [a.outcome for a in queue.attempts(job.id)] == [AttemptOutcome.DISCARDED]


def test_a_completion_claims_the_next_job_in_its_own_transaction(queue: JobStore, backend: Backend) -> None:
    session_id = backend.require_session()
    first = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    second = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    claim = queue.claim_next(session_id, JobPool.AI, AI_TYPES)
    assert claim is not None
    then = NextClaim(session_id, JobPool.AI, AI_TYPES)
    queue.complete(claim, then=then)
    assert then.claim is not None
    assert then.claim.job.id == second.id
    assert queue.get(first.id).status is JobStatus.COMPLETED
    assert queue.get(second.id).status is JobStatus.PROCESSING
    assert [(a.attempt, a.outcome) for a in queue.attempts(second.id)] == [(1, None)]
    assert [(e.job_id, e.new_status) for e in events] == [
        (first.id, JobStatus.PROCESSING),
        (first.id, JobStatus.COMPLETED),
        (second.id, JobStatus.PROCESSING),
    ]
    last = NextClaim(session_id, JobPool.AI, AI_TYPES)
    queue.complete(then.claim, then=last)
    assert last.claim is None  # nothing left to claim


def _claimed(then: NextClaim) -> Claim | None:
    return then.claim


def test_a_published_completion_hands_over_its_next_claim_only_when_it_commits(
    queue: JobStore, backend: Backend
) -> None:
    session_id = backend.require_session()
    queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    second = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")
    claim = queue.claim_next(session_id, JobPool.AI, AI_TYPES)
    assert claim is not None
    then = NextClaim(session_id, JobPool.AI, AI_TYPES)
    with pytest.raises(RuntimeError, match="publishing failed"), backend.db.write() as session:
        queue.complete(claim, session, then=then)
        raise RuntimeError("publishing failed")
    assert _claimed(then) is None
    assert queue.get(second.id).status is JobStatus.PENDING
    assert queue.get(claim.job.id).status is JobStatus.PROCESSING
    with backend.db.write() as session:
        queue.complete(claim, session, then=then)
        assert _claimed(then) is None  # not before the commit
    following = _claimed(then)
    assert following is not None
    assert following.job.id == second.id
    assert queue.get(second.id).status is JobStatus.PROCESSING


def test_a_drain_claims_each_next_job_with_the_previous_completion(queue: JobStore, backend: Backend) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(5)]
    claims_made = 0
    real_claim_batch = queue.claim_batch

    def counting_claim_batch(session_id: str, pool: JobPool, job_types: Collection[JobType], limit: int) -> list[Claim]:
        nonlocal claims_made
        claims_made += 1
        return real_claim_batch(session_id, pool, job_types, limit)

    queue.claim_batch = counting_claim_batch  # type: ignore[method-assign]
    executor = _executor(queue, backend, lambda _context: None)
    assert executor.drain(JobPool.AI) == 5
    assert claims_made == 1  # the other four were claimed by the completions; the last found none
    assert {queue.get(job.id).status for job in jobs} == {JobStatus.COMPLETED}


def test_a_drain_stopped_between_jobs_gives_the_next_claim_back(queue: JobStore, backend: Backend) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(3)]
    asked = 0

    def go_on() -> bool:  # yes before the first claim and when it completes (it claims the second), then no
        nonlocal asked
        asked += 1
        return asked <= 2

    executor = _executor(queue, backend, lambda _context: None)
    assert executor.drain(JobPool.AI, should_continue=go_on) == 1
    assert queue.get(jobs[0].id).status is JobStatus.COMPLETED
    second = queue.get(jobs[1].id)
    assert second.status is JobStatus.PENDING
    assert second.attempts == 0  # given back: no attempt spent
    assert [a.outcome for a in queue.attempts(jobs[1].id)] == [AttemptOutcome.INTERRUPTED]
    assert queue.get(jobs[2].id).status is JobStatus.PENDING


# --- batches of claims ------------------------------------------------------------------------


def _counting(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the units of work the job store waits for (``Database.write_unit``: one entry each)."""
    real = backend.db.write_unit
    opened: list[int] = []

    def counting(work: Callable[[Any], object]) -> object:
        opened.append(1)
        return real(work)

    monkeypatch.setattr(backend.db, "write_unit", counting)
    return opened


def _quick_executor(queue: JobStore, backend: Backend, processor: Callable[[JobContext], None]) -> JobExecutor:
    """An executor whose jobs take no time by its timer: after a pool's first job it claims full batches."""
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, processor)
    return JobExecutor(queue, registry, backend.require_session(), breakers={}, timer=lambda: 0.0)


class _Hand:
    """Wraps a processor: the most jobs claimed and not started yet at any moment (a worker's hand), from the
    queue's claim events and the processor's calls. (Completions are not counted: the completion of a job that
    wrote nothing may be written a little after the next job started.)"""

    def __init__(self, queue: JobStore, processor: Callable[[JobContext], None]) -> None:
        self.processor = processor
        self.claimed: set[str] = set()
        self.most = 0
        self._lock = threading.Lock()
        queue.add_listener(self._on_event)

    def _on_event(self, event: JobEvent) -> None:
        if event.old_status is JobStatus.PENDING and event.new_status is JobStatus.PROCESSING:
            with self._lock:
                self.claimed.add(event.job_id)
                self.most = max(self.most, len(self.claimed))

    def __call__(self, context: JobContext) -> None:
        with self._lock:
            self.claimed.discard(context.job.id)
        self.processor(context)


def test_a_batch_claim_takes_the_oldest_jobs_in_one_transaction_each_with_its_own_attempt(
    queue: JobStore, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(5)]
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    transactions = _counting(backend, monkeypatch)
    session_id = backend.require_session()

    claimed = queue.claim_batch(session_id, JobPool.AI, AI_TYPES, 3)

    assert len(transactions) == 1
    assert [claim.job.id for claim in claimed] == [job.id for job in jobs[:3]]
    assert [(e.job_id, e.old_status, e.new_status) for e in events] == [
        (job.id, JobStatus.PENDING, JobStatus.PROCESSING) for job in jobs[:3]
    ]
    run_ids = [claim.run_id for claim in claimed]
    assert run_ids == sorted(set(run_ids))  # each its own run, in claim order
    assert len({claim.attempt_id for claim in claimed}) == 3
    for claim in claimed:
        stored = queue.get(claim.job.id)
        assert stored.status is JobStatus.PROCESSING
        assert stored.owner_session == session_id
        assert stored.attempts == claim.attempt == 1
        assert stored.run_id == claim.run_id
        assert stored.lease_until is not None
        assert stored.started_at is not None
        assert stored.lease_until - stored.started_at == timedelta(seconds=queue.settings.lease_seconds)
    assert {queue.get(job.id).status for job in jobs[3:]} == {JobStatus.PENDING}
    # the rest, and then nothing
    assert [c.job.id for c in queue.claim_batch(session_id, JobPool.AI, AI_TYPES, 3)] == [j.id for j in jobs[3:]]
    assert queue.claim_batch(session_id, JobPool.AI, AI_TYPES, 3) == []


def test_a_drain_of_quick_jobs_claims_them_in_batches(
    queue: JobStore, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(40)]
    claiming = _counting(backend, monkeypatch)  # a claim, alone or with a completion
    processor = RecordingProcessor()
    hand = _Hand(queue, processor)

    assert _quick_executor(queue, backend, hand).drain(JobPool.AI) == 40

    assert [job_id for job_id, _attempt, _thread in processor.calls] == [job.id for job in jobs]  # oldest first
    assert 1 < hand.most <= MAX_BATCH  # jobs waited, claimed, in the worker's hand
    # the first job alone (how long jobs take is known once it ran), then batches claimed by completions, the
    # last of which finds nothing: nowhere near a claim for every job
    assert len(claiming) == 1 + -(-39 // MAX_BATCH) + 1
    for job in jobs:
        assert queue.get(job.id).status is JobStatus.COMPLETED
        assert [(a.attempt, a.outcome) for a in queue.attempts(job.id)] == [(1, AttemptOutcome.SUCCEEDED)]


def test_jobs_that_take_long_are_claimed_one_at_a_time(queue: JobStore, backend: Backend) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(6)]
    seconds = iter(range(1_000_000))  # by the executor's timer every job takes a second
    registry = ProcessorRegistry()
    hand = _Hand(queue, lambda _context: None)
    registry.register(JobType.CARD_ANALYSIS, hand)
    executor = JobExecutor(queue, registry, backend.require_session(), breakers={}, timer=lambda: float(next(seconds)))

    assert executor.drain(JobPool.AI) == 6
    assert hand.most == 1  # none waited behind another, claimed
    assert {queue.get(job.id).status for job in jobs} == {JobStatus.COMPLETED}


def test_jobs_held_when_the_app_closes_go_back_without_spending_an_attempt(queue: JobStore, backend: Backend) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(5)]
    executor: JobExecutor

    def close_the_app_during_the_second(context: JobContext) -> None:
        if context.job.id == jobs[1].id:  # claimed with jobs 2-4 by the first one's completion
            assert {queue.get(job.id).status for job in jobs[2:]} == {JobStatus.PROCESSING}
            executor.shutdown_event.set()

    executor = _quick_executor(queue, backend, close_the_app_during_the_second)
    assert executor.drain(JobPool.AI) == 2

    assert [queue.get(job.id).status for job in jobs[:2]] == [JobStatus.COMPLETED] * 2
    for job in jobs[2:]:
        given_back = queue.get(job.id)
        assert given_back.status is JobStatus.PENDING
        assert given_back.attempts == 0  # no attempt spent
        assert given_back.owner_session is None
        assert given_back.lease_until is None
        assert [(a.outcome, a.error_text) for a in queue.attempts(job.id)] == [
            (AttemptOutcome.INTERRUPTED, "the app is closing")
        ]


def test_a_held_job_cancelled_meanwhile_does_not_run(queue: JobStore, backend: Backend) -> None:
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(4)]

    def cancel_the_third_during_the_second(context: JobContext) -> None:
        if context.job.id == jobs[1].id:  # the third waits, claimed, in the worker's hand
            assert queue.get(jobs[2].id).status is JobStatus.PROCESSING
            queue.cancel(jobs[2].id)

    processor = RecordingProcessor(cancel_the_third_during_the_second)
    assert _quick_executor(queue, backend, processor).drain(JobPool.AI) == 3

    assert [job_id for job_id, _attempt, _thread in processor.calls] == [jobs[0].id, jobs[1].id, jobs[3].id]
    cancelled = queue.get(jobs[2].id)
    assert cancelled.status is JobStatus.CANCELLED
    assert [a.outcome for a in queue.attempts(cancelled.id)] == [AttemptOutcome.DISCARDED]
    assert queue.get(jobs[3].id).status is JobStatus.COMPLETED


def test_a_held_job_cancelled_after_a_failure_does_not_run(clocked_queue: JobStore, backend: Backend) -> None:
    queue = clocked_queue
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(4)]

    def fail_the_second_and_cancel_the_third(context: JobContext) -> None:
        if context.job.id == jobs[1].id:  # no completion looks at the third: the worker does, before it runs
            queue.cancel(jobs[2].id)
            raise TransientError("server busy")

    processor = RecordingProcessor(fail_the_second_and_cancel_the_third)
    _quick_executor(queue, backend, processor).drain(JobPool.AI)

    assert [job_id for job_id, _attempt, _thread in processor.calls] == [jobs[0].id, jobs[1].id, jobs[3].id]
    assert queue.get(jobs[2].id).status is JobStatus.CANCELLED
    assert [a.outcome for a in queue.attempts(jobs[2].id)] == [AttemptOutcome.DISCARDED]


def test_held_jobs_go_back_when_the_breaker_opens(clocked_queue: JobStore, backend: Backend) -> None:
    queue = clocked_queue
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in range(5)]

    def fail_the_second(context: JobContext) -> None:
        if context.job.id == jobs[1].id:
            raise TransientError("AI server answered 500")

    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, fail_the_second)
    breaker = CircuitBreaker(failure_threshold=1, cooldown=60, max_cooldown=60)
    executor = JobExecutor(
        queue, registry, backend.require_session(), breakers={JobPool.AI: breaker}, timer=lambda: 0.0
    )
    assert executor.drain(JobPool.AI) == 2

    assert breaker.status().state is BreakerState.OPEN
    assert queue.get(jobs[0].id).status is JobStatus.COMPLETED
    assert [a.outcome for a in queue.attempts(jobs[1].id)] == [AttemptOutcome.RETRY_SCHEDULED]
    for job in jobs[2:]:
        given_back = queue.get(job.id)
        assert (given_back.status, given_back.attempts) == (JobStatus.PENDING, 0)
        assert [(a.outcome, a.error_text) for a in queue.attempts(job.id)] == [
            (AttemptOutcome.INTERRUPTED, "its pool was paused")
        ]


# --- retry policy -----------------------------------------------------------------------------


def test_transient_failures_back_off_then_succeed(clocked_queue: JobStore, backend: Backend, clock: FakeClock) -> None:
    def flaky(context: JobContext) -> None:
        if context.claim.attempt < 3:
            raise TransientError(f"server busy on attempt {context.claim.attempt}")

    executor = _executor(clocked_queue, backend, flaky)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    delays = []
    for _ in range(2):
        _run_one(clocked_queue, executor, backend.require_session())
        waiting = clocked_queue.get(job.id)
        assert waiting.status is JobStatus.PENDING
        assert waiting.error_kind is ErrorKind.TRANSIENT
        assert waiting.run_after is not None
        delays.append((waiting.run_after - clock.now).total_seconds())
        assert not clocked_queue.has_runnable(AI_TYPES)  # backing off
        clock.advance(delays[-1])
    assert delays[1] == 2 * delays[0]  # exponential
    _run_one(clocked_queue, executor, backend.require_session())
    done = clocked_queue.get(job.id)
    assert done.status is JobStatus.COMPLETED
    assert done.error_message is None
    outcomes = [a.outcome for a in clocked_queue.attempts(job.id)]
    assert outcomes == [AttemptOutcome.RETRY_SCHEDULED, AttemptOutcome.RETRY_SCHEDULED, AttemptOutcome.SUCCEEDED]


def test_transient_failures_stop_after_max_attempts(
    clocked_queue: JobStore, backend: Backend, clock: FakeClock
) -> None:
    processor = RecordingProcessor(behaviour=lambda _ctx: (_ for _ in ()).throw(TimeoutError("too slow")))
    executor = _executor(clocked_queue, backend, processor)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    for _ in range(3):
        clock.advance(3600)
        _run_one(clocked_queue, executor, backend.require_session())
    failed = clocked_queue.get(job.id)
    assert failed.status is JobStatus.FAILED
    assert failed.attempts == 3
    assert processor.count() == 3
    clock.advance(3600)
    assert not clocked_queue.has_runnable(AI_TYPES)


def test_permanent_failure_fails_at_once(clocked_queue: JobStore, backend: Backend) -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def unauthorized(_context: JobContext) -> None:
        response = httpx.Response(401, request=request)
        raise httpx.HTTPStatusError("401 Unauthorized", request=request, response=response)

    executor = _executor(clocked_queue, backend, unauthorized)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    _run_one(clocked_queue, executor, backend.require_session())
    failed = clocked_queue.get(job.id)
    assert failed.status is JobStatus.FAILED
    assert failed.attempts == 1
    assert failed.error_kind is ErrorKind.PERMANENT
    assert failed.error_message == "HTTPStatusError: 401 Unauthorized"


def test_missing_target_fails_without_retry(clocked_queue: JobStore, backend: Backend) -> None:
    def load_target(_context: JobContext) -> None:
        raise TargetNotFoundError()

    executor = _executor(clocked_queue, backend, load_target)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "deleted-scrap")
    _run_one(clocked_queue, executor, backend.require_session())
    failed = clocked_queue.get(job.id)
    assert failed.status is JobStatus.FAILED
    assert failed.attempts == 1
    assert failed.error_message == "Target data not found (Already deleted)"  # seed 000's words, as they are


def test_retry_after_is_honoured_without_spending_attempts(
    clocked_queue: JobStore, backend: Backend, clock: FakeClock
) -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    limited = {"times": 0}

    def rate_limited(context: JobContext) -> None:
        if limited["times"] < 5:
            limited["times"] += 1
            response = httpx.Response(429, headers={"Retry-After": "42"}, request=request)
            raise httpx.HTTPStatusError("429 Too Many Requests", request=request, response=response)

    executor = _executor(clocked_queue, backend, rate_limited)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    for _ in range(5):  # more rate limits than max_attempts: none of them counts
        _run_one(clocked_queue, executor, backend.require_session())
        waiting = clocked_queue.get(job.id)
        assert waiting.status is JobStatus.PENDING
        assert waiting.attempts == 0
        assert waiting.run_after == clock.now + __import__("datetime").timedelta(seconds=42)
        clock.advance(41)
        assert not clocked_queue.has_runnable(AI_TYPES)
        clock.advance(1)
    _run_one(clocked_queue, executor, backend.require_session())
    done = clocked_queue.get(job.id)
    assert done.status is JobStatus.COMPLETED
    assert done.attempts == 1
    assert [a.outcome for a in clocked_queue.attempts(job.id)].count(AttemptOutcome.RATE_LIMITED) == 5


def test_stored_error_chain_is_short_named_and_secret_free(clocked_queue: JobStore, backend: Backend) -> None:
    secret = "sk-live-0123456789abcdefSECRET"

    def leaky(_context: JobContext) -> None:
        try:
            raise ConnectionRefusedError(f"POST http://127.0.0.1:9/v1 with Authorization: Bearer {secret}")
        except ConnectionRefusedError as inner:
            raise ValueError("AI reply was not JSON: " + "garbage " * 300 + secret) from inner

    executor = _executor(clocked_queue, backend, leaky)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    _run_one(clocked_queue, executor, backend.require_session())
    failed = clocked_queue.get(job.id)
    assert failed.error_message is not None
    assert len(failed.error_message) <= 1000
    assert failed.error_message.startswith("ValueError: AI reply was not JSON")
    assert secret not in failed.error_message
    attempt_text = clocked_queue.attempts(job.id)[0].error_text or ""
    assert "ConnectionRefusedError" in attempt_text  # the full text keeps every cause
    assert "ValueError" in attempt_text
    assert secret not in attempt_text
    with backend.db.sessions() as session:
        stored = session.execute(sa.text("SELECT error_message FROM async_jobs")).scalar_one()
    assert secret not in stored


def test_chain_names_each_cause_when_short(clocked_queue: JobStore, backend: Backend) -> None:
    def nested(_context: JobContext) -> None:
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError as inner:
            raise RuntimeError("analysis failed") from inner

    executor = _executor(clocked_queue, backend, nested)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    _run_one(clocked_queue, executor, backend.require_session())
    assert clocked_queue.get(job.id).error_message == (
        "RuntimeError: analysis failed <- ConnectionRefusedError: refused"
    )


# --- user actions -----------------------------------------------------------------------------


def test_manual_retry_grants_a_fresh_attempt(clocked_queue: JobStore, backend: Backend, clock: FakeClock) -> None:
    outcome = {"fail": True}

    def sometimes(_context: JobContext) -> None:
        if outcome["fail"]:
            raise TimeoutError("slow")

    executor = _executor(clocked_queue, backend, sometimes)
    job = clocked_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1", max_attempts=1)
    _run_one(clocked_queue, executor, backend.require_session())
    assert clocked_queue.get(job.id).status is JobStatus.FAILED
    with pytest.raises(JobStateError):
        clocked_queue.cancel(job.id)
    retried = clocked_queue.retry(job.id)
    assert retried.status is JobStatus.PENDING
    assert retried.max_attempts == 2
    outcome["fail"] = False
    _run_one(clocked_queue, executor, backend.require_session())
    assert clocked_queue.get(job.id).status is JobStatus.COMPLETED


def test_retry_and_cancel_explain_what_is_not_possible(queue: JobStore) -> None:
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    with pytest.raises(JobStateError, match="only failed or cancelled"):
        queue.retry(job.id)
    assert queue.cancel(job.id).status is JobStatus.CANCELLED
    with pytest.raises(JobNotFoundError):
        queue.retry("no-such-job")
    newer = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    with pytest.raises(DuplicateJobError) as duplicate:
        queue.retry(job.id)  # another job for the same target is already waiting
    assert duplicate.value.existing_job_id == newer.id


def test_running_job_cancelled_cooperatively(queue: JobStore, backend: Backend) -> None:
    started = threading.Event()
    release = threading.Event()

    def long_running(context: JobContext) -> None:
        started.set()
        release.wait(30)
        context.raise_if_cancelled()

    executor = _executor(queue, backend, long_running)
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    worker = threading.Thread(target=_run_one, args=(queue, executor, backend.require_session()))
    worker.start()
    assert started.wait(30)
    queue.cancel(job.id)
    assert executor.request_cancel(job.id)
    release.set()
    worker.join(30)
    assert queue.get(job.id).status is JobStatus.CANCELLED
    assert [a.outcome for a in queue.attempts(job.id)] == [AttemptOutcome.DISCARDED]
