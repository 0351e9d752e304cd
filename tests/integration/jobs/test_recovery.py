"""The recovery sweep: dead sessions' work, stalled jobs, transient failures, overdue jobs, hooks."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AppSession, AsyncJob
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.records import Claim
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from san_desktop.services.recovery.sweep import sweep
from tests.support.jobs import jobs_of

AI_TYPES = frozenset({JobType.CARD_ANALYSIS})


def _claim_as(queue: JobStore, session_id: str, target: str = "scrap-1") -> str:
    job = queue.enqueue(JobType.CARD_ANALYSIS, target)
    claim = queue.claim_next(session_id, JobPool.AI, AI_TYPES)
    assert claim is not None
    assert claim.job.id == job.id
    return job.id


def test_work_of_a_dead_session_is_requeued_at_once(
    queue: JobStore, backend: Backend, job_settings: JobSettings
) -> None:
    dead = start_session(backend.db, "gui")  # a previous run that was killed
    job_id = _claim_as(queue, dead)

    report = sweep(queue, backend.require_session(), job_settings)

    assert report.requeued_interrupted == [job_id]
    job = queue.get(job_id)
    assert job.status is JobStatus.PENDING
    assert job.owner_session is None
    assert job.attempts == 0  # the interruption was not the job's fault
    assert [a.outcome for a in queue.attempts(job_id)] == [AttemptOutcome.INTERRUPTED]
    with backend.db.sessions() as session:
        assert session.get(AppSession, dead).ended_at is not None  # type: ignore[union-attr]
    assert queue.has_runnable(AI_TYPES)


def test_a_job_that_keeps_killing_the_app_fails_after_max_interruptions(
    queue: JobStore, backend: Backend, job_settings: JobSettings
) -> None:
    job_id = _claim_as(queue, start_session(backend.db, "gui"))
    sweep(queue, backend.require_session(), job_settings)
    for _ in range(job_settings.max_interruptions - 1):
        assert queue.get(job_id).status is JobStatus.PENDING  # re-queued after each interruption
        claim = queue.claim_next(start_session(backend.db, "gui"), JobPool.AI, AI_TYPES)
        assert claim is not None
        assert claim.job.id == job_id
        sweep(queue, backend.require_session(), job_settings)
    job = queue.get(job_id)
    assert job.status is JobStatus.FAILED
    assert "Interrupted 5 times" in (job.error_message or "")


def test_a_live_job_past_its_time_is_reported_not_run_twice(
    queue: JobStore, backend: Backend, job_settings: JobSettings
) -> None:
    job_id = _claim_as(queue, backend.require_session())
    later = queue.clock() + timedelta(seconds=job_settings.processing_stall_seconds + 60)

    report = sweep(queue, backend.require_session(), job_settings, now=later)

    assert report.stalled == [job_id]
    assert report.requeued_interrupted == []
    assert queue.get(job_id).status is JobStatus.PROCESSING
    assert not queue.has_runnable(AI_TYPES)


def test_a_recent_live_job_is_left_alone(queue: JobStore, backend: Backend, job_settings: JobSettings) -> None:
    job_id = _claim_as(queue, backend.require_session())
    report = sweep(queue, backend.require_session(), job_settings)
    assert report.stalled == []
    assert queue.get(job_id).status is JobStatus.PROCESSING


def _failed(queue: JobStore, backend: Backend, target: str, kind: ErrorKind, attempts: int) -> str:
    job = queue.enqueue(JobType.CARD_ANALYSIS, target)
    with backend.db.write() as session:
        session.execute(
            sa.update(AsyncJob)
            .where(AsyncJob.id == job.id)
            .values(status=JobStatus.FAILED, error_kind=kind, attempts=attempts, error_message="x")
        )
    return job.id


def test_failed_transient_jobs_with_attempts_left_are_retried(
    queue: JobStore, backend: Backend, job_settings: JobSettings
) -> None:
    retry_me = _failed(queue, backend, "a", ErrorKind.TRANSIENT, 1)
    permanent = _failed(queue, backend, "b", ErrorKind.PERMANENT, 1)
    exhausted = _failed(queue, backend, "c", ErrorKind.TRANSIENT, 3)
    superseded = _failed(queue, backend, "d", ErrorKind.TRANSIENT, 1)
    newer = queue.enqueue(JobType.CARD_ANALYSIS, "d")
    claim = queue.claim_next(backend.require_session(), JobPool.AI, AI_TYPES)
    assert claim is not None
    assert claim.job.id == newer.id
    queue.complete(claim)

    report = sweep(queue, backend.require_session(), job_settings)

    assert report.retried_failed == [retry_me]
    assert queue.get(retry_me).status is JobStatus.PENDING
    for job_id in (permanent, exhausted, superseded):
        assert queue.get(job_id).status is JobStatus.FAILED


def test_overdue_waiting_jobs_are_reported(queue: JobStore, backend: Backend, job_settings: JobSettings) -> None:
    job = queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")
    later = queue.clock() + timedelta(seconds=job_settings.pending_overdue_seconds + 1)
    assert sweep(queue, backend.require_session(), job_settings, now=later).overdue_pending == [job.id]
    assert sweep(queue, backend.require_session(), job_settings).overdue_pending == []


def test_hooks_run_in_the_sweep(queue: JobStore, backend: Backend, job_settings: JobSettings) -> None:
    def orphan_rule(session: Session, hook_queue: JobStore) -> int:
        try:
            hook_queue.enqueue(JobType.SCRAP_REFINE, "orphan-scrap", session=session)
        except DuplicateJobError:  # queued in an earlier round: a hook enqueues only what is missing
            return 0
        return 1

    report = sweep(queue, backend.require_session(), job_settings, hooks=[orphan_rule])
    assert report.enqueued_by_hooks == 1
    assert [job.target_id for job in jobs_of(queue)] == ["orphan-scrap"]


def test_of_two_transient_failures_of_one_work_only_the_newest_is_retried(
    queue: JobStore, backend: Backend, job_settings: JobSettings
) -> None:
    """Both going back to the queue would be two active jobs of one work (the index refuses the second)."""
    older = _failed(queue, backend, "same", ErrorKind.TRANSIENT, 1)
    newer = _failed(queue, backend, "same", ErrorKind.TRANSIENT, 1)

    report = sweep(queue, backend.require_session(), job_settings)

    assert report.retried_failed == [newer]
    assert queue.get(newer).status is JobStatus.PENDING
    assert queue.get(older).status is JobStatus.FAILED


def _claimed_long_job(queue: JobStore, backend: Backend) -> tuple[Claim, datetime]:
    """A claimed job and the end of its first lease."""
    queue.enqueue(JobType.CARD_ANALYSIS, "long")
    claim = queue.claim_next(backend.require_session(), JobPool.AI, AI_TYPES)
    assert claim is not None
    first = queue.get(claim.job.id).lease_until
    assert first is not None
    return claim, first


def test_a_long_job_extends_its_lease_while_it_is_the_claims(queue: JobStore, backend: Backend) -> None:
    claim, first = _claimed_long_job(queue, backend)
    queue.clock = lambda: first + timedelta(hours=1)

    renewed = queue.extend_lease(claim)

    assert renewed == first + timedelta(hours=1) + timedelta(seconds=queue.settings.lease_seconds)
    assert queue.get(claim.job.id).lease_until == renewed
    queue.cancel(claim.job.id)
    assert queue.extend_lease(claim) is None  # no longer its: nothing written
    assert queue.get(claim.job.id).lease_until is None
