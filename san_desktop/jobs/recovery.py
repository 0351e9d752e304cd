"""The recovery sweep (seed 001: batches every 2 hours), run at start-up before any job and then
periodically. Plain code: the runner calls it on a worker thread.

- Work owned by a dead app session (crash, kill) is recorded as INTERRUPTED and re-queued at once. The
  single-instance lock guarantees that every session other than the caller's is dead.
- A job PROCESSING far past its start in the live session is reported as stalled, never run twice.
- FAILED jobs whose error was transient and that have attempts left are retried, unless a later job of
  the same target and type completed.
- Waiting jobs far past their time are reported.
- Hooks add feature rules (orphan scraps without a card or refined text, in the scrap issue).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session, aliased

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JOB_POOLS, AttemptOutcome, ErrorKind, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AppSession, AsyncJob, JobAttempt
from san_desktop.queue.job_queue import JobQueue
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.queue.transitions import check_job_transition

log = logging.getLogger(__name__)

INTERRUPTED_TOO_OFTEN = "Interrupted {count} times (the app stopped while running it); not retried again"

# A hook gets an open write session and the queue, enqueues at most SWEEP_HOOK_BATCH jobs and returns how
# many it enqueued; the sweep calls it again, in a new transaction, while it enqueues any (HOOK_ROUNDS at
# most). Each round commits on its own, so a sweep stopped between rounds loses nothing: the next sweep
# finds what is still missing.
SweepHook = Callable[[Session, JobQueue], int]
HOOK_ROUNDS = 200


@dataclass
class SweepReport:
    requeued_interrupted: list[str] = field(default_factory=list)
    failed_interrupted: list[str] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)
    retried_failed: list[str] = field(default_factory=list)
    overdue_pending: list[str] = field(default_factory=list)
    enqueued_by_hooks: int = 0
    dead_sessions: int = 0

    def summary(self) -> str:
        parts = [
            f"{len(self.requeued_interrupted)} interrupted job(s) re-queued",
            f"{len(self.failed_interrupted)} failed after repeated interruptions",
            f"{len(self.stalled)} stalled",
            f"{len(self.retried_failed)} failed job(s) retried",
            f"{len(self.overdue_pending)} overdue",
            f"{self.enqueued_by_hooks} enqueued for orphans",
        ]
        return ", ".join(parts)


def sweep(
    queue: JobQueue,
    session_id: str,
    settings: JobSettings,
    *,
    hooks: list[SweepHook] | tuple[SweepHook, ...] = (),
    now: datetime | None = None,
    stop: threading.Event | None = None,
) -> SweepReport:
    """``stop``: once set, no further hook round starts (the app is closing: a library of 50,000 cards
    made the hooks' rounds run for over a minute, and quitting waited for them)."""
    now = now or queue.clock()
    report = SweepReport()
    events: list[JobEvent] = []
    with queue.db.write() as session:
        report.dead_sessions = _end_dead_sessions(session, session_id, now)
        _recover_interrupted(session, session_id, settings, now, report, events)
        _find_stalled(session, session_id, settings, now, report)
        _retry_transient_failures(session, now, report, events)
        _find_overdue(session, settings, now, report)
    queue.announce(events)
    for hook in hooks:
        for _round in range(HOOK_ROUNDS):
            if stop is not None and stop.is_set():
                log.info("Recovery sweep stopped before its hooks were done: %s", report.summary())
                return report
            with queue.db.write() as session:
                enqueued = hook(session, queue)
            report.enqueued_by_hooks += enqueued
            if not enqueued:
                break
    log.info("Recovery sweep: %s", report.summary())
    return report


def _end_dead_sessions(session: Session, live_session: str, now: datetime) -> int:
    result = session.execute(
        sa.update(AppSession).where(AppSession.id != live_session, AppSession.ended_at.is_(None)).values(ended_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def _recover_interrupted(
    session: Session,
    live_session: str,
    settings: JobSettings,
    now: datetime,
    report: SweepReport,
    events: list[JobEvent],
) -> None:
    orphans = session.scalars(
        sa.select(AsyncJob).where(
            AsyncJob.status == JobStatus.PROCESSING,
            sa.or_(AsyncJob.owner_session.is_(None), AsyncJob.owner_session != live_session),
        )
    ).all()
    for job in orphans:
        interrupted = "The app stopped (crash, kill or power loss) while this attempt ran."
        opened = session.execute(  # (a row opened by a version that wrote one at every claim)
            sa.update(JobAttempt)
            .where(JobAttempt.job_id == job.id, JobAttempt.outcome.is_(None))
            .values(outcome=AttemptOutcome.INTERRUPTED, ended_at=now, error_text=interrupted)
        )
        if not getattr(opened, "rowcount", 0):  # the attempt was the job row's own: it joins the history
            session.add(
                JobAttempt(
                    job_id=job.id,
                    attempt=job.attempts,
                    run_id=job.run_id or "",
                    session_id=job.owner_session or "",
                    pool=JOB_POOLS[JobType(job.job_type)],
                    started_at=job.started_at or now,
                    ended_at=now,
                    outcome=AttemptOutcome.INTERRUPTED,
                    error_text=interrupted,
                )
            )
            session.flush()
        interruptions = session.scalar(
            sa.select(sa.func.count())
            .select_from(JobAttempt)
            .where(JobAttempt.job_id == job.id, JobAttempt.outcome == AttemptOutcome.INTERRUPTED)
        )
        count = int(interruptions or 0)
        if count >= settings.max_interruptions:
            values: dict[str, object] = {
                "status": JobStatus.FAILED,
                "finished_at": now,
                "error_message": INTERRUPTED_TOO_OFTEN.format(count=count),
                "error_kind": ErrorKind.PERMANENT,
            }
            report.failed_interrupted.append(job.id)
        else:
            # an interruption is not the job's fault: it does not spend an attempt
            values = {"status": JobStatus.PENDING, "attempts": sa.func.max(0, AsyncJob.attempts - 1)}
            report.requeued_interrupted.append(job.id)
        check_job_transition(JobStatus.PROCESSING, JobStatus(str(values["status"])))
        updated = session.execute(
            sa.update(AsyncJob)
            .where(AsyncJob.id == job.id, AsyncJob.status == JobStatus.PROCESSING)
            .values(owner_session=None, lease_until=None, run_after=None, updated_at=now, **values)
            .returning(AsyncJob)
            .execution_options(synchronize_session=False, populate_existing=True)
        ).scalar_one()
        events.append(JobEvent(JobRecord.from_row(updated), JobStatus.PROCESSING))


def _find_stalled(
    session: Session, live_session: str, settings: JobSettings, now: datetime, report: SweepReport
) -> None:
    limit = now - timedelta(seconds=settings.processing_stall_seconds)
    stalled = session.scalars(
        sa.select(AsyncJob.id).where(
            AsyncJob.status == JobStatus.PROCESSING,
            AsyncJob.owner_session == live_session,
            sa.or_(AsyncJob.started_at < limit, AsyncJob.lease_until < now),
        )
    ).all()
    for job_id in stalled:
        log.warning("Job %s has been running for too long; it is left alone (not run twice)", job_id)
    report.stalled.extend(stalled)


def _retry_transient_failures(session: Session, now: datetime, report: SweepReport, events: list[JobEvent]) -> None:
    other = aliased(AsyncJob)
    # not when a later job of the same target and type completed, nor while another one is active
    superseded = (
        sa.select(other.id)
        .where(
            other.job_type == AsyncJob.job_type,
            other.target_id == AsyncJob.target_id,
            other.id != AsyncJob.id,
            sa.or_(
                sa.and_(other.id > AsyncJob.id, other.status == JobStatus.COMPLETED),
                other.status.in_(ACTIVE_JOB_STATUSES),
            ),
        )
        .exists()
    )
    candidates = session.scalars(
        sa.select(AsyncJob).where(
            AsyncJob.status == JobStatus.FAILED,
            AsyncJob.error_kind == ErrorKind.TRANSIENT,
            AsyncJob.attempts < AsyncJob.max_attempts,
            ~superseded,
        )
    ).all()
    check_job_transition(JobStatus.FAILED, JobStatus.PENDING)
    for job in candidates:
        updated = session.execute(
            sa.update(AsyncJob)
            .where(AsyncJob.id == job.id, AsyncJob.status == JobStatus.FAILED)
            .values(status=JobStatus.PENDING, finished_at=None, run_after=None, updated_at=now)
            .returning(AsyncJob)
            .execution_options(synchronize_session=False, populate_existing=True)
        ).scalar_one()
        report.retried_failed.append(job.id)
        events.append(JobEvent(JobRecord.from_row(updated), JobStatus.FAILED))


def _find_overdue(session: Session, settings: JobSettings, now: datetime, report: SweepReport) -> None:
    limit = now - timedelta(seconds=settings.pending_overdue_seconds)
    overdue = session.scalars(
        sa.select(AsyncJob.id)
        .where(
            AsyncJob.status == JobStatus.PENDING,
            sa.func.coalesce(AsyncJob.run_after, AsyncJob.created_at) < limit,
        )
        .limit(1000)
    ).all()
    report.overdue_pending.extend(overdue)
