"""Plain, frozen values describing jobs: what crosses threads and reaches the GUI (never ORM objects)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from san_desktop.core.enums import (
    JOB_POOLS,
    AttemptOutcome,
    ErrorKind,
    JobPool,
    JobStatus,
    JobType,
)

if TYPE_CHECKING:  # only for the types: these records cross threads without the ORM (or its import)
    import sqlalchemy as sa

    from san_desktop.db.models import AsyncJob, JobAttempt


@dataclass(frozen=True)
class Classification:
    """What the job layer decided about a failure: may it succeed later, and must it wait first."""

    kind: ErrorKind
    retry_after: float | None = None  # seconds; set for rate limits

    @property
    def rate_limited(self) -> bool:
        return self.retry_after is not None


@dataclass(frozen=True)
class JobRecord:
    id: str
    job_type: JobType
    target_id: str
    status: JobStatus
    attempts: int
    max_attempts: int
    error_message: str | None
    error_kind: ErrorKind | None
    payload: str | None
    run_after: datetime | None
    owner_session: str | None
    lease_until: datetime | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    run_id: str | None = None  # the current (or last) attempt's

    @property
    def pool(self) -> JobPool:
        return JOB_POOLS[self.job_type]

    @classmethod
    def from_row(cls, row: AsyncJob | sa.Row[Any]) -> JobRecord:
        """Of a model or of a row of ``tables.async_jobs``."""
        return cls(
            id=row.id,
            job_type=JobType(row.job_type),
            target_id=row.target_id,
            status=JobStatus(row.status),
            attempts=row.attempts,
            max_attempts=row.max_attempts,
            error_message=row.error_message,
            error_kind=ErrorKind(row.error_kind) if row.error_kind else None,
            payload=row.payload,
            run_after=row.run_after,
            owner_session=row.owner_session,
            lease_until=row.lease_until,
            created_at=row.created_at,
            updated_at=row.updated_at,
            started_at=row.started_at,
            finished_at=row.finished_at,
            run_id=row.run_id,
        )


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt of a job: a row of ``job_attempts`` for one that did not succeed, or the job row's own
    current attempt (running, or the one that succeeded)."""

    id: str
    job_id: str
    attempt: int
    run_id: str
    session_id: str
    pool: JobPool
    started_at: datetime
    ended_at: datetime | None
    outcome: AttemptOutcome | None
    error_text: str | None

    @classmethod
    def from_row(cls, row: JobAttempt) -> AttemptRecord:
        return cls(
            id=row.id,
            job_id=row.job_id,
            attempt=row.attempt,
            run_id=row.run_id,
            session_id=row.session_id,
            pool=JobPool(row.pool),
            started_at=row.started_at,
            ended_at=row.ended_at,
            outcome=AttemptOutcome(row.outcome) if row.outcome else None,
            error_text=row.error_text,
        )


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


@dataclass(frozen=True)
class Claim:
    """A job claimed by one attempt of one session; only this claim may finish it."""

    job: JobRecord
    attempt_id: str
    run_id: str
    session_id: str
    pool: JobPool

    @property
    def attempt(self) -> int:
        return self.job.attempts


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
