"""Which status a job may go to from which (issue 26): one table that every change of a job's status is
checked against, whoever makes it (the runner's claims and finishes, a retry or cancel from the window or
the command line, the recovery sweep). Anything else is ``IllegalJobTransitionError``: a bug, never a
person's mistake (a retry of a job that is not failed is said in ``JobStateError``'s words before it gets here).

PENDING → PROCESSING     a worker claims it
PENDING → CANCELLED      cancelled while it waits
PROCESSING → COMPLETED   it succeeded
PROCESSING → PENDING     a retry after a transient failure, a rate limit waited out, the app closing
                         (released), or the sweep resuming it after a crash
PROCESSING → FAILED      a permanent failure, the last attempt, or too many interruptions
PROCESSING → CANCELLED   cancelled while it runs (its result is dropped)
FAILED → PENDING         retried (by a person, or by the sweep when the failure was transient)
CANCELLED → PENDING      retried by a person
COMPLETED                final: what it made is there; asking again makes a new job
"""

from __future__ import annotations

from san_desktop.core.enums import JobStatus

JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.PENDING: frozenset({JobStatus.PROCESSING, JobStatus.CANCELLED}),
    JobStatus.PROCESSING: frozenset({JobStatus.COMPLETED, JobStatus.PENDING, JobStatus.FAILED, JobStatus.CANCELLED}),
    JobStatus.FAILED: frozenset({JobStatus.PENDING}),
    JobStatus.CANCELLED: frozenset({JobStatus.PENDING}),
    JobStatus.COMPLETED: frozenset(),
}


# what a person may retry (run again with a fresh attempt)
RETRYABLE_STATUSES: tuple[JobStatus, ...] = (JobStatus.FAILED, JobStatus.CANCELLED)


class IllegalJobTransitionError(Exception):
    """A change the table does not allow: a bug in the caller."""

    def __init__(self, old: JobStatus, new: JobStatus) -> None:
        allowed = ", ".join(sorted(JOB_TRANSITIONS[old])) or "nothing (it is final)"
        super().__init__(f"A job cannot go from {old.value} to {new.value} (from {old.value}: {allowed})")
        self.old = old
        self.new = new


def check_job_transition(old: JobStatus, new: JobStatus) -> None:
    if new not in JOB_TRANSITIONS[old]:
        raise IllegalJobTransitionError(old, new)


def sources_of(new: JobStatus, wanted: frozenset[JobStatus] | None = None) -> tuple[JobStatus, ...]:
    """The statuses a job may go to ``new`` from (of ``wanted``, when given: each must be one of them)."""
    if wanted is not None:
        for old in wanted:
            check_job_transition(old, new)
        return tuple(sorted(wanted))
    return tuple(sorted(old for old, targets in JOB_TRANSITIONS.items() if new in targets))
