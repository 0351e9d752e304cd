"""The recovery sweep (seed 001: batches every 2 hours), run at start-up before any job and then
periodically. Plain code: the runner calls it on a worker thread.

- Work owned by a dead app session (crash, kill) is recorded as INTERRUPTED and re-queued at once. The
  single-instance lock guarantees that every session other than the caller's is dead.
- A job PROCESSING far past its start in the live session is reported as stalled, never run twice.
- FAILED jobs whose error was transient and that have attempts left are retried, when no later job of
  the same target and type exists.
- Every change of a job goes through the job store (``queue.store``), which checks it against the table.
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
from sqlalchemy.orm import Session

from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AppSession
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore
from san_desktop.queue.upkeep import Recovered

log = logging.getLogger(__name__)

# A hook gets an open write session and the queue, enqueues at most SWEEP_HOOK_BATCH jobs and returns how
# many it enqueued; the sweep calls it again, in a new transaction, while it enqueues any (HOOK_ROUNDS at
# most). Each round commits on its own, so a sweep stopped between rounds loses nothing: the next sweep
# finds what is still missing.
SweepHook = Callable[[Session, JobStore], int]
HOOK_ROUNDS = 200
# overdue waiting jobs a sweep reports at most
OVERDUE_SHOWN = 1000


@dataclass
class SweepReport:
    requeued_interrupted: list[str] = field(default_factory=list)
    # of those, the jobs of a session that ended itself (a quit that could not give them back in time): nothing
    # unexpected happened to them
    requeued_after_quit: list[str] = field(default_factory=list)
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
    queue: JobStore,
    session_id: str,
    settings: JobSettings,
    *,
    hooks: list[SweepHook] | tuple[SweepHook, ...] = (),
    now: datetime | None = None,
    stop: threading.Event | None = None,
) -> SweepReport:
    """``stop``: once set, no further hook round starts (the app is closing: a library of 50,000 cards
    made the hooks' rounds run for over a minute, and quitting waited for them)."""
    if now is None:
        queue.db.resync_clock()  # a server's library: machines' clocks drift
        now = queue.clock()
    report = SweepReport()
    events: list[JobEvent] = []
    with queue.db.write() as session:
        ended_now = _end_dead_sessions(session, session_id, now)
        report.dead_sessions = len(ended_now)
        recovered = queue.recover_interrupted(session, session_id, now)
        report.requeued_interrupted, report.failed_interrupted = recovered.requeued, recovered.failed
        report.requeued_after_quit = _of_sessions_that_ended_themselves(session, recovered, ended_now)
        events.extend(recovered.events)
        _find_stalled(queue, session, session_id, settings, now, report)
        retried = queue.retry_transient_failures(session, now)
        report.retried_failed = [item.job.id for item in retried]
        events.extend(retried)
        _find_overdue(queue, session, settings, now, report)
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


def _end_dead_sessions(session: Session, live_session: str, now: datetime) -> set[str]:
    """End this machine's other sessions: its instance lock makes them dead (they crashed, or were killed);
    their ids. Another machine's sessions of a shared library are its own to end (their jobs are recovered once
    their leases run out)."""
    machine = session.scalar(sa.select(AppSession.machine_id).where(AppSession.id == live_session))
    same_machine = sa.or_(AppSession.machine_id.is_(None), AppSession.machine_id == machine) if machine else sa.true()
    ended = session.scalars(
        sa.update(AppSession)
        .where(AppSession.id != live_session, AppSession.ended_at.is_(None), same_machine)
        .values(ended_at=now)
        .returning(AppSession.id)
        .execution_options(synchronize_session=False)
    ).all()
    return set(ended)


def _of_sessions_that_ended_themselves(session: Session, recovered: Recovered, ended_now: set[str]) -> list[str]:
    """The recovered jobs whose session had ended by itself (its process quit, and recorded it) before this
    sweep: neither one it ended now (crashed) nor one still open (another machine whose lease ran out)."""
    owners = {owner for owner in recovered.owners.values() if owner is not None and owner not in ended_now}
    if not owners:
        return []
    ended = set(
        session.scalars(
            sa.select(AppSession.id).where(AppSession.id.in_(owners), AppSession.ended_at.is_not(None))
        ).all()
    )
    return [job_id for job_id in recovered.requeued if recovered.owners.get(job_id) in ended]


def _find_stalled(
    queue: JobStore, session: Session, live_session: str, settings: JobSettings, now: datetime, report: SweepReport
) -> None:
    started_before = now - timedelta(seconds=settings.processing_stall_seconds)
    stalled = queue.stalled(session, live_session, started_before, now)
    for job_id in stalled:
        log.warning("Job %s has been running for too long; it is left alone (not run twice)", job_id)
    report.stalled.extend(stalled)


def _find_overdue(queue: JobStore, session: Session, settings: JobSettings, now: datetime, report: SweepReport) -> None:
    before = now - timedelta(seconds=settings.pending_overdue_seconds)
    report.overdue_pending.extend(queue.overdue(session, before, OVERDUE_SHOWN))
