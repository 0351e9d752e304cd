"""The recovery sweep's upkeep of the job rows, as the job store decides it: an attempt a dead session left running
joins its job's history as interrupted and spends no attempt, until a job interrupted too often fails for good;
finished jobs go once they are old enough. The SQL is the database's jobs driver's; each change is checked
against the status table here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from san_desktop.core.enums import JobStatus
from san_desktop.core.settings import JobSettings
from san_desktop.queue.records import JobEvent
from san_desktop.queue.transitions import check_job_transition

if TYPE_CHECKING:
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
