"""The recovery sweep's upkeep of the job rows, as the job store decides it: an attempt a dead session left running
joins its job's history as interrupted and spends no attempt, until a job interrupted too often fails for good;
finished jobs go once they are old enough. The SQL is the database's jobs driver's; each change is checked
against the status table here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from san_desktop.core.enums import JobStatus
from san_desktop.core.settings import JobSettings
from san_desktop.queue.announcer import Announcer
from san_desktop.queue.reads import JobCursors
from san_desktop.queue.records import JobEvent
from san_desktop.queue.transitions import check_job_transition

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from san_desktop.db.backends.base import JobsDriver

INTERRUPTED = "The app stopped (crash, kill or power loss) while this attempt ran."
INTERRUPTED_TOO_OFTEN = "Interrupted {count} times (the app stopped while running it); not retried again"


@dataclass
class Recovered:
    """What ``JobStore.recover_interrupted`` did with the attempts a dead session left running."""

    requeued: list[str] = field(default_factory=list)  # back to PENDING, no attempt spent
    failed: list[str] = field(default_factory=list)  # interrupted too often: FAILED for good
    events: list[JobEvent] = field(default_factory=list)  # to announce once the caller committed
    owners: dict[str, str | None] = field(default_factory=dict)  # job id -> the session that held it


def recover(jobs: JobsDriver, cursor: Any, live_session: str, now: datetime, settings: JobSettings) -> Recovered:
    """Every attempt running in a dead session joins its job's history as INTERRUPTED; the job goes back to
    PENDING without spending an attempt, or to FAILED once it was interrupted ``max_interruptions`` times (a
    job that kills the app every time). Dead: ended (the sweep ends this machine's sessions other than
    ``live_session``, which its instance lock makes dead) or unknown; or, a session of another machine
    sharing the library, its lease ran out (that machine stopped, or lost the server)."""
    recovered = Recovered()
    for job in jobs.orphans(cursor, live_session, now):
        recovered.owners[job.id] = job.owner_session
        count = jobs.interrupt(cursor, job, now, INTERRUPTED)
        failed = INTERRUPTED_TOO_OFTEN.format(count=count) if count >= settings.max_interruptions else None
        check_job_transition(JobStatus.PROCESSING, JobStatus.FAILED if failed else JobStatus.PENDING)
        resumed = jobs.resume(cursor, job, now, failed)
        if resumed is None:  # no longer that attempt: another machine's sweep took it
            continue
        (recovered.failed if failed else recovered.requeued).append(job.id)
        recovered.events.append(JobEvent(resumed, JobStatus.PROCESSING))
    return recovered


def prune_before(settings: JobSettings, now: datetime, *, completed_only: bool) -> tuple[datetime, datetime | None]:
    """Until when completed jobs, and failed or cancelled ones, are old enough to go (these never, with
    ``completed_only``)."""
    completed = now - timedelta(days=settings.keep_completed_days)
    return completed, None if completed_only else now - timedelta(days=settings.keep_failed_days)


class SweepUpkeep(Announcer, JobCursors):
    """The recovery sweep's upkeep of the job rows (``JobStore``'s), in the caller's transaction unless said."""

    settings: JobSettings
    clock: Callable[[], datetime]
    _failures_on_screen: bool

    def recover_interrupted(self, session: Session, live_session: str, now: datetime) -> Recovered:
        """Attempts a dead session left running: INTERRUPTED in their history, their jobs queued again (or
        failed, once interrupted too often). The events are the caller's to announce once it committed."""
        session.flush()  # (what the caller's session holds, written before these statements read)
        with self._cursor_in(session) as cursor:
            return recover(self.jobs, cursor, live_session, now, self.settings)

    def take_back_expired(self, live_session: str) -> Recovered:
        """Jobs whose lease ran out while another session held them (a machine that stopped renewing: killed,
        or cut off from the server), and jobs of sessions that ended, back to the queue as interrupted, in one
        transaction, announced once it committed: ``recover_interrupted`` without the rest of a sweep."""
        with self.jobs.reading() as cursor:  # a look first: most of the time there is nothing, and nothing to write
            if not self.jobs.orphans(cursor, live_session, self.clock(), limit=1):
                return Recovered()
        with self._pooled() as cursor:
            recovered = recover(self.jobs, cursor, live_session, self.clock(), self.settings)
        self.announce(recovered.events)
        return recovered

    def retry_transient_failures(self, session: Session, now: datetime) -> list[JobEvent]:
        """FAILED jobs whose error was transient and that have attempts left go back to PENDING: only the
        newest job of a work, and none while another job of that work is active."""
        check_job_transition(JobStatus.FAILED, JobStatus.PENDING)
        with self._cursor_in(session) as cursor:
            retried = self.jobs.retry_transient_failures(cursor, now)
        return [JobEvent(record, JobStatus.FAILED) for record in retried]

    def stalled(self, session: Session, live_session: str, started_before: datetime, now: datetime) -> list[str]:
        """Jobs this session runs that started before ``started_before`` or whose lease ran out (the sweep warns
        of them, and leaves them alone: never run twice)."""
        with self._cursor_in(session) as cursor:
            return self.jobs.stalled(cursor, live_session, started_before, now)

    def overdue(self, session: Session, before: datetime, limit: int) -> list[str]:
        """Up to ``limit`` waiting jobs that were due before ``before`` (the sweep reports them)."""
        with self._cursor_in(session) as cursor:
            return self.jobs.overdue(cursor, before, limit)

    def prune(self, session: Session, limit: int) -> int:
        """Delete up to ``limit`` finished jobs (their attempts go with them): completed ones finished more than
        ``keep_completed_days`` ago, failed and cancelled ones more than ``keep_failed_days`` ago (only while no
        failure group is on screen), except a failure the sweep will still retry (transient, attempts left);
        how many. What a domain row must remember of its jobs it keeps itself (a scrap's stopped work), so
        pruning changes no behaviour."""
        completed_before, failed_before = prune_before(
            self.settings, self.clock(), completed_only=self._failures_on_screen
        )
        with self._cursor_in(session) as cursor:
            return self.jobs.prune(cursor, completed_before, failed_before, limit)

    def failures_on_screen(self, shown: bool) -> None:
        """Whether a person is looking at the failure groups: a group must not shrink under their eyes
        (nor under their *Retry group*) because the sweep pruned what it held."""
        self._failures_on_screen = shown
