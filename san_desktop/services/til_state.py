"""Where a day's TIL stands: the one way its status changes (checked against the transition table of
``core.workflow``), and a TIL following its job when that job stopped without the processor saying so.

A job can end while its TIL is inside a step without the processor running: cancelled (one job or in
bulk), failed by the recovery sweep after too many interruptions, or killed before it could record its
failure. ``settle_stopped`` moves such a TIL to FAILED at that step, with the job's reason, so it offers
Retry. Two things call it: a listener on the queue, at once after the job's change committed, and a
recovery sweep hook, for a change this process did not see (another process's queue, a crash between the
two writes). Light on purpose (no AI, no numpy): the facade installs the listener at start-up.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.core.timeutil import utcnow
from san_desktop.core.workflow import TIL_ACTIVE, TIL_STEPS, TilStatus, check_transition
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, DailySummary
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore

CANCELLED_IN_STEP = "Cancelled while the {step} step ran."
STOPPED_IN_STEP = "The generation stopped while the {step} step ran."
_STOPPED = frozenset({JobStatus.FAILED, JobStatus.CANCELLED})


def set_status(summary: DailySummary, new: TilStatus, now: datetime | None = None) -> None:
    """The one way a TIL's status changes: checked against the transition table."""
    check_transition(TilStatus(summary.status), new)
    summary.status = new
    summary.updated_at = now or utcnow()


def record_failure(summary: DailySummary, step: str, message: str) -> None:
    set_status(summary, TilStatus.FAILED)
    summary.last_failed_step = step
    summary.last_error_message = message[:1000]


def settle_stopped(session: Session, summary_ids: Collection[str] | None = None) -> list[str]:
    """TILs (of ``summary_ids``, or all) inside a step whose generation job is neither waiting nor running:
    FAILED at that step, with the reason of their latest job. Returns the ids it moved."""
    active_job = sa.exists().where(
        AsyncJob.job_type == JobType.TIL_GENERATION,
        AsyncJob.target_id == DailySummary.id,
        AsyncJob.status.in_(ACTIVE_JOB_STATUSES),
    )
    query = sa.select(DailySummary).where(DailySummary.status.in_(sorted(TIL_ACTIVE)), ~active_job)
    if summary_ids is not None:
        query = query.where(DailySummary.id.in_(list(summary_ids)))
    moved = []
    for summary in session.scalars(query).all():
        step = next(step.name for step in TIL_STEPS if step.running == summary.status)
        latest = session.execute(
            sa.select(AsyncJob.status, AsyncJob.error_message)
            .where(AsyncJob.job_type == JobType.TIL_GENERATION, AsyncJob.target_id == summary.id)
            .order_by(AsyncJob.id.desc())
            .limit(1)
        ).first()
        if latest is not None and latest.status == JobStatus.CANCELLED:
            reason = CANCELLED_IN_STEP.format(step=step)
        elif latest is not None and latest.status == JobStatus.FAILED and latest.error_message:
            reason = latest.error_message
        else:
            reason = STOPPED_IN_STEP.format(step=step)
        record_failure(summary, step, reason)
        moved.append(summary.id)
    return moved


class TilFollowsItsJob:
    """A job queue listener: when a TIL generation job is cancelled or fails, its TIL follows at once
    (``settle_stopped``). Called on whatever thread made the change, after it committed."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def __call__(self, event: JobEvent) -> None:
        job = event.job
        if job.job_type is not JobType.TIL_GENERATION or job.status not in _STOPPED:
            return
        with self.db.write() as session:
            settle_stopped(session, [job.target_id])


def settle_stopped_hook(session: Session, _queue: JobStore) -> int:
    """The recovery sweep's part: every TIL left inside a step by a job that stopped. Enqueues nothing."""
    settle_stopped(session)
    return 0
