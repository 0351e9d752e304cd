"""The job store: the one seam through which every job is enqueued, claimed, finished, moved between statuses,
recovered after a crash, pruned and watched (issue 26).

Whoever changes a job (the runner's workers, the job monitor, the recovery sweep, the command line) does it
through these methods, and each method checks its change against the status table (``queue.transitions``).
A single retry or cancel is the bulk operation of one id. What a job's domain row must follow (a commit
request, a TIL) it follows through the records these methods return, never by guessing.

``JobQueue`` (``queue.job_queue`` with the hot-path SQL in ``queue.claims``) is the SQLite implementation; the
SQL that is particular to a database lives there and in ``db/`` only, so another database (PostgreSQL) comes
in as another implementation of this protocol, not as branches through the callers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, AttemptOutcome, JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.database import Database, Notified, SessionOrConnection
from san_desktop.queue.records import AttemptRecord, BulkResult, Claim, Classification, JobEvent, JobRecord, NextClaim

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.orm import Session

Listener = Callable[[JobEvent], None]


@dataclass
class Recovered:
    """What ``JobStore.recover_interrupted`` did with the attempts a dead session left running."""

    requeued: list[str] = field(default_factory=list)  # back to PENDING, no attempt spent
    failed: list[str] = field(default_factory=list)  # interrupted too often: FAILED for good
    events: list[JobEvent] = field(default_factory=list)  # to announce once the caller committed
    owners: dict[str, str | None] = field(default_factory=dict)  # job id -> the session that held it


class JobStore(Protocol):
    """Every change of a job's state, in one place (see the module's docstring)."""

    db: Database
    settings: JobSettings
    clock: Callable[[], datetime]

    # --- who hears of changes (after they committed) --------------------------------------------
    def add_listener(self, listener: Listener) -> None: ...
    def remove_listener(self, listener: Listener) -> None: ...
    def announce(self, events: Iterable[JobEvent]) -> None: ...
    def watch_others(self, callback: Notified) -> bool:
        """Call ``callback`` (from another thread) with the ids of jobs another process or machine (or this
        one) wrote, as they committed; with None when which is unknown, and '' among them when a job's write
        named no job. False when nothing will call (the caller looks by itself)."""
        ...

    def unwatch_others(self, callback: Notified) -> None: ...
    @property
    def others_notify(self) -> bool:
        """Whether other processes' changes are being told now (``watch_others``' calls come)."""
        ...

    # --- enqueue ----------------------------------------------------------------------------------
    def enqueue(
        self,
        job_type: JobType,
        target_id: str,
        *,
        session: SessionOrConnection | None = None,
        payload: str | None = None,
        max_attempts: int | None = None,
    ) -> JobRecord: ...
    def enqueue_new(self, session: sa.Connection, jobs: Sequence[tuple[JobType, str]]) -> list[JobRecord]: ...
    def active_or_enqueue(
        self, session: SessionOrConnection, job_type: JobType, target_id: str, *, payload: str | None = None
    ) -> JobRecord: ...
    def active_job_id(self, session: SessionOrConnection, job_type: JobType, target_id: str) -> str | None: ...

    # --- a worker's claim, lease and finish ---------------------------------------------------------
    def has_runnable(self, job_types: Collection[JobType]) -> bool: ...
    def waiting_summary(self, job_types: Collection[JobType]) -> tuple[int, datetime] | None: ...
    def wake(self, job_types: Collection[JobType]) -> list[JobRecord]: ...
    def claim_next(self, session_id: str, pool: JobPool, job_types: Collection[JobType]) -> Claim | None: ...
    def claim_batch(
        self, session_id: str, pool: JobPool, job_types: Collection[JobType], limit: int
    ) -> list[Claim]: ...
    def still_owned(self, session: Session, claim: Claim) -> bool: ...
    def holds(self, claim: Claim) -> bool: ...
    def renew_leases(self, claimed: Collection[Claim]) -> set[str]: ...
    def extend_lease(self, claim: Claim) -> datetime | None: ...
    def complete(self, claim: Claim, session: Session | None = None, *, then: NextClaim | None = None) -> JobRecord: ...
    def outcome_of(self, claim: Claim, exc: BaseException, found: Classification) -> AttemptOutcome: ...
    def fail(self, claim: Claim, exc: BaseException, found: Classification) -> JobRecord | None: ...
    def release(self, claim: Claim, reason: str) -> JobRecord | None: ...
    def discard(self, claim: Claim) -> None: ...

    # --- a person's retry and cancel (one job is a bulk of one) ------------------------------------
    def transition(
        self,
        job_ids: Iterable[str],
        new: JobStatus,
        *,
        from_statuses: Collection[JobStatus] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> BulkResult: ...
    def retry_jobs(self, job_ids: Iterable[str], progress: Callable[[int], None] | None = None) -> BulkResult: ...
    def cancel_jobs(
        self,
        job_ids: Iterable[str],
        progress: Callable[[int], None] | None = None,
        *,
        statuses: Collection[JobStatus] = ACTIVE_JOB_STATUSES,
    ) -> BulkResult: ...
    def retry(self, job_id: str) -> JobRecord: ...
    def cancel(self, job_id: str) -> JobRecord: ...

    # --- the recovery sweep (in the caller's transaction) ----------------------------------------------
    def recover_interrupted(self, session: Session, live_session: str, now: datetime) -> Recovered: ...
    def take_back_expired(self, live_session: str) -> Recovered: ...
    def retry_transient_failures(self, session: Session, now: datetime) -> list[JobEvent]: ...
    def prune(self, session: Session, limit: int) -> int: ...
    def failures_on_screen(self, shown: bool) -> None: ...

    # --- reading ----------------------------------------------------------------------------------
    def get(self, job_id: str) -> JobRecord: ...
    def attempts(self, job_id: str) -> list[AttemptRecord]: ...
    def changed_since(self, since: datetime, limit: int = 500, after_id: str = "") -> list[JobRecord]:
        """Jobs changed after ``since``, oldest change first, a page of ``limit``; the next page: ``since`` and
        ``after_id`` of the last one read."""
        ...

    def jobs_named(self, ids: Iterable[str], chunk: int = 500) -> list[JobRecord]:
        """The jobs of ``ids`` as they are now (those that still exist: pruned ones are not), in no order."""
        ...
