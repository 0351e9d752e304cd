"""The SQLite job store's upkeep, for the recovery sweep: attempts a dead session left running, transient
failures retried, finished jobs pruned. Each runs in the caller's transaction and checks its changes against
the status table; ``JobQueue`` exposes them as the store's methods."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session, aliased

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JOB_POOLS, AttemptOutcome, ErrorKind, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AppSession, AsyncJob, JobAttempt
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.queue.store import Recovered
from san_desktop.queue.transitions import RETRYABLE_STATUSES, check_job_transition

INTERRUPTED = "The app stopped (crash, kill or power loss) while this attempt ran."
INTERRUPTED_TOO_OFTEN = "Interrupted {count} times (the app stopped while running it); not retried again"


def orphaned(live_session: str, now: datetime) -> sa.ColumnElement[bool]:
    """Running jobs no live session answers for: of a session that ended (or none), or whose lease ran out
    while another session held them (that machine stopped renewing it)."""
    live = sa.select(AppSession.id).where(AppSession.ended_at.is_(None))
    return sa.and_(
        AsyncJob.status == JobStatus.PROCESSING,
        sa.or_(
            AsyncJob.owner_session.is_(None),
            AsyncJob.owner_session.not_in(live),
            sa.and_(AsyncJob.owner_session != live_session, AsyncJob.lease_until < now),
        ),
    )


def recover_interrupted(session: Session, live_session: str, settings: JobSettings, now: datetime) -> Recovered:
    """Every attempt running in a dead session joins its job's history as INTERRUPTED; the job goes back to
    PENDING without spending an attempt, or to FAILED once it was interrupted ``max_interruptions`` times (a
    job that kills the app every time). Dead: ended (the sweep ends this machine's sessions other than
    ``live_session``, which its instance lock makes dead) or unknown; or, a session of another machine
    sharing the library, its lease ran out (that machine stopped, or lost the server)."""
    recovered = Recovered()
    orphans = session.scalars(sa.select(AsyncJob).where(orphaned(live_session, now))).all()
    for job in orphans:
        recovered.owners[job.id] = job.owner_session
        opened = session.execute(  # (a row opened by a version that wrote one at every claim)
            sa.update(JobAttempt)
            .where(JobAttempt.job_id == job.id, JobAttempt.outcome.is_(None))
            .values(outcome=AttemptOutcome.INTERRUPTED, ended_at=now, error_text=INTERRUPTED)
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
                    error_text=INTERRUPTED,
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
            recovered.failed.append(job.id)
        else:
            # an interruption is not the job's fault: it does not spend an attempt
            spent = sa.case((AsyncJob.attempts > 0, AsyncJob.attempts - 1), else_=0)
            values = {"status": JobStatus.PENDING, "attempts": spent}
            recovered.requeued.append(job.id)
        check_job_transition(JobStatus.PROCESSING, JobStatus(str(values["status"])))
        updated = session.execute(
            sa.update(AsyncJob)
            .where(
                AsyncJob.id == job.id,
                AsyncJob.status == JobStatus.PROCESSING,
                # still the attempt found: another machine's may have ended it and claimed it again since
                AsyncJob.owner_session.is_not_distinct_from(job.owner_session),
                AsyncJob.attempts == job.attempts,
            )
            .values(owner_session=None, lease_until=None, run_after=None, updated_at=now, **values)
            .returning(AsyncJob)
            .execution_options(synchronize_session=False, populate_existing=True)
        ).scalar_one()
        recovered.events.append(JobEvent(JobRecord.from_row(updated), JobStatus.PROCESSING))
    return recovered


def superseded() -> sa.Exists:
    """Whether the work (type and target) of the query's ``AsyncJob`` has a later job, whatever became of it
    (it says what the work needs now), or another one waiting or running."""
    other = aliased(AsyncJob)
    return (
        sa.select(other.id)
        .where(
            other.job_type == AsyncJob.job_type,
            other.target_id == AsyncJob.target_id,
            other.id != AsyncJob.id,
            sa.or_(other.id > AsyncJob.id, other.status.in_(ACTIVE_JOB_STATUSES)),
        )
        .exists()
    )


def retry_transient_failures(session: Session, now: datetime) -> list[JobEvent]:
    """FAILED jobs whose error was transient and that have attempts left go back to PENDING: only the newest
    job of a work, and none while another job of that work is active (``superseded``)."""
    check_job_transition(JobStatus.FAILED, JobStatus.PENDING)
    rows = session.scalars(
        sa.update(AsyncJob)
        .where(
            AsyncJob.status == JobStatus.FAILED,
            AsyncJob.error_kind == ErrorKind.TRANSIENT,
            AsyncJob.attempts < AsyncJob.max_attempts,
            ~superseded(),
        )
        .values(status=JobStatus.PENDING, finished_at=None, run_after=None, updated_at=now)
        .returning(AsyncJob)
        .execution_options(synchronize_session=False, populate_existing=True)
    ).all()
    return [JobEvent(JobRecord.from_row(row), JobStatus.FAILED) for row in rows]


def prune(session: Session, settings: JobSettings, now: datetime, limit: int, *, completed_only: bool = False) -> int:
    """Delete up to ``limit`` finished jobs (their attempts go with them): completed ones finished more than
    ``keep_completed_days`` ago, failed and cancelled ones more than ``keep_failed_days`` ago (unless
    ``completed_only``), except a failure the sweep will still retry (transient, attempts left). Returns how
    many."""
    ended = sa.func.coalesce(AsyncJob.finished_at, AsyncJob.updated_at)
    retry_pending = sa.and_(
        AsyncJob.status == JobStatus.FAILED,
        AsyncJob.error_kind == ErrorKind.TRANSIENT,
        AsyncJob.attempts < AsyncJob.max_attempts,
    )
    old = (
        sa.select(AsyncJob.id)
        .where(
            sa.or_(
                sa.and_(
                    AsyncJob.status == JobStatus.COMPLETED,
                    ended < now - timedelta(days=settings.keep_completed_days),
                ),
                sa.and_(
                    sa.false() if completed_only else sa.true(),
                    AsyncJob.status.in_(RETRYABLE_STATUSES),
                    ended < now - timedelta(days=settings.keep_failed_days),
                    ~retry_pending,
                ),
            )
        )
        .limit(limit)
    )
    result = session.execute(
        sa.delete(AsyncJob).where(AsyncJob.id.in_(old)).execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)
