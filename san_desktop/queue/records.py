"""Plain values of the queue: what the job layer decided of a failure, a job's change as announced, a completion's
next claim, a bulk action's result. A job's row, an attempt and a claim are ``core.jobs``' (named here too)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from san_desktop.core.enums import ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.jobs import AttemptRecord, Claim, JobRecord

__all__ = [
    "AttemptRecord",
    "BulkResult",
    "Claim",
    "Classification",
    "JobEvent",
    "JobRecord",
    "NextClaim",
]


@dataclass(frozen=True)
class Classification:
    """What the job layer decided about a failure: may it succeed later, and must it wait first."""

    kind: ErrorKind
    retry_after: float | None = None  # seconds; set for rate limits

    @property
    def rate_limited(self) -> bool:
        return self.retry_after is not None


@dataclass(frozen=True)
class JobEvent:
    """One status change of one job, announced after the transaction that made it committed."""

    job: JobRecord
    old_status: JobStatus | None  # None: the job was just created, or changed by another process
    external: bool = False  # seen changed by another process (the command line); its old state is unknown

    @property
    def job_id(self) -> str:
        return self.job.id

    @property
    def new_status(self) -> JobStatus:
        return self.job.status


@dataclass
class NextClaim:
    """Lets a job's completion make the worker's next job ready in the same transaction (one commit per job
    instead of two).

    With ``held`` (the next job in the worker's hand, claimed in an earlier batch) the completion looks
    whether that job is still this session's: a person may have cancelled it meanwhile (``held_owned``;
    whether it may start is asked just before it does). Without, the completion claims up to ``limit``
    runnable jobs, each with its own lease: ``ready`` is asked once, when the job completes (it may take the
    breaker's probe slot: ``asked`` then says so); ``claim``, the first of them, is set once that transaction
    committed, and stays None when nothing was runnable; ``more`` holds the others (``claimed``)."""

    session_id: str
    pool: JobPool
    job_types: frozenset[JobType]
    ready: Callable[[], bool] = lambda: True
    limit: int = 1
    held: Claim | None = None
    asked: bool = False
    claim: Claim | None = None
    more: list[Claim] = field(default_factory=list)  # read only once ``claim`` is set (committed)
    held_owned: bool | None = None  # None: not looked at (the job did not complete)

    def wanted(self) -> NextClaim | None:
        if self.held is not None:
            return self
        if self.asked or not self.ready():
            return None
        self.asked = True
        return self

    def claimed(self) -> list[Claim]:
        """The jobs the completion claimed, once its transaction committed; the first runs next."""
        return [self.claim, *self.more] if self.claim is not None else []


@dataclass(frozen=True)
class BulkResult:
    """What a retry or cancel of jobs did: the jobs it changed, and how many it left as they were (and why)."""

    changed: tuple[JobRecord, ...] = ()
    skipped: int = 0  # not in a state the action applies to, or another run of the same work is queued

    def __or__(self, other: BulkResult) -> BulkResult:
        return BulkResult(self.changed + other.changed, self.skipped + other.skipped)

    @property
    def count(self) -> int:
        return len(self.changed)
