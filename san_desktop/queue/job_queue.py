"""The job queue, which is the ``async_jobs`` table itself: nothing is ever held only in memory.

Every status change is one short transaction with a conditional UPDATE, and is announced to the
listeners after it committed (seed 001: dispatch after commit). Listeners may be called on any thread.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError

from san_desktop.core.enums import (
    ACTIVE_JOB_STATUSES,
    JOB_POOLS,
    AttemptOutcome,
    ErrorKind,
    JobPool,
    JobStatus,
    JobType,
)
from san_desktop.core.ids import new_id
from san_desktop.core.redact import error_details, error_message
from san_desktop.core.settings import JobSettings
from san_desktop.core.sqlite_codes import is_constraint
from san_desktop.db.database import JOBS_CHANNEL, Database, Notified, SessionOrConnection
from san_desktop.db.tables import async_jobs
from san_desktop.queue import claims
from san_desktop.queue.errors import (
    DuplicateJobError,
    JobCancelledError,
    JobNotFoundError,
    JobStateError,
    JobSupersededError,
)
from san_desktop.queue.records import (
    AttemptRecord,
    BulkResult,
    Claim,
    Classification,
    JobEvent,
    JobRecord,
    NextClaim,
)
from san_desktop.queue.store import Listener, Recovered
from san_desktop.queue.transitions import RETRYABLE_STATUSES, sources_of

if TYPE_CHECKING:  # the ORM (and ``queue.upkeep``, which needs it) loads when first used: a capture needs neither
    from sqlalchemy.orm import Session, SessionTransaction

log = logging.getLogger(__name__)

# jobs changed by one transaction of a bulk retry or cancel: the app's other writers (a capture, a worker
# finishing a job) get their turn between the batches
BULK_BATCH = 500
# What a recovery sweep hook enqueues in one transaction at most: every other writer of the app (the
# window's capture too) waits while one runs, so none may be long.
SWEEP_HOOK_BATCH = 500

# keys in Session.info for events waiting on the caller's commit
_PENDING_EVENTS = "san_pending_job_events"
_PENDING_CLAIMS = "san_pending_next_claims"
_HOOKED = "san_job_events_hooked"


class JobQueue:
    """The job store (``queue.store.JobStore``) on SQLite."""

    def __init__(
        self,
        db: Database,
        settings: JobSettings,
        *,
        clock: Callable[[], datetime] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """``clock``: the database's (``Database.clock``: a server's time on PostgreSQL) unless given."""
        self.db = db
        self.settings = settings
        self.clock = clock or db.clock
        self.jitter = jitter
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self._failures_on_screen = False  # a person looks at the failure groups: failed jobs are not pruned

    # --- announcements ------------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        with self._listeners_lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with self._listeners_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def watch_others(self, callback: Notified) -> bool:
        return self.db.listen(JOBS_CHANNEL, callback)

    def unwatch_others(self, callback: Notified) -> None:
        self.db.unlisten(JOBS_CHANNEL, callback)

    @property
    def others_notify(self) -> bool:
        return self.db.notified

    def announce(self, events: Iterable[JobEvent]) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for item in events:
            for listener in listeners:
                try:
                    listener(item)
                except Exception:
                    log.exception("A job listener failed on %s", item)

    @contextmanager
    def _unit(self) -> Iterator[tuple[sa.Connection, list[JobEvent]]]:
        """A write transaction whose collected events are announced once it committed."""
        events: list[JobEvent] = []
        with self.db.write_connection() as connection:
            yield connection, events
        self.announce(events)

    # --- enqueue ------------------------------------------------------------------------------

    def enqueue(
        self,
        job_type: JobType,
        target_id: str,
        *,
        session: SessionOrConnection | None = None,
        payload: str | None = None,
        max_attempts: int | None = None,
    ) -> JobRecord:
        """Add a PENDING job. With ``session`` (an ORM session or a ``Database.write_connection``), inside the
        caller's open transaction: the job is announced (and so can run) only if and when that transaction
        commits.

        Raises ``DuplicateJobError`` naming the active job when one of this type and target exists;
        the database's partial unique index decides, so there is no check-then-insert race.
        """
        if session is None:
            with self._unit() as (own, events):
                record = self._insert(own, job_type, target_id, payload, max_attempts)
                events.append(JobEvent(record, None))
            return record
        record = self._insert(session, job_type, target_id, payload, max_attempts)
        self._announce_after_commit(session, JobEvent(record, None))
        return record

    def _insert(
        self,
        session: SessionOrConnection,
        job_type: JobType,
        target_id: str,
        payload: str | None,
        max_attempts: int | None,
    ) -> JobRecord:
        # a Core insert, so that a capture enqueues its jobs without the ORM
        record = self._new_record(job_type, target_id, payload, max_attempts, self.clock())
        try:
            with session.begin_nested():  # a duplicate must not spoil the caller's transaction
                session.execute(sa.insert(async_jobs).values(_set_values(record)))
        except IntegrityError as exc:
            # the partial unique index on active jobs refused it: by its code, and the job that holds it
            existing = self.active_job_id(session, job_type, target_id) if is_constraint(exc) else None
            if existing is None:
                raise
            raise DuplicateJobError(job_type, target_id, existing) from None
        return record

    def _new_record(
        self, job_type: JobType, target_id: str, payload: str | None, max_attempts: int | None, now: datetime
    ) -> JobRecord:
        return JobRecord(
            id=new_id(),
            job_type=job_type,
            target_id=target_id,
            status=JobStatus.PENDING,
            attempts=0,
            max_attempts=max_attempts or self.settings.max_attempts,
            error_message=None,
            error_kind=None,
            payload=payload,
            run_after=None,
            owner_session=None,
            lease_until=None,
            created_at=now,
            updated_at=now,
            started_at=None,
            finished_at=None,
        )

    def enqueue_new(self, session: sa.Connection, jobs: Sequence[tuple[JobType, str]]) -> list[JobRecord]:
        """PENDING jobs of targets made in ``session``'s open transaction (an import's new scraps), which have
        none yet: one statement for all, without a savepoint each (a duplicate, impossible for a new target,
        would fail the transaction), announced together when it commits. An import of 10,000 notes spent most
        of its time, holding the GIL the window needs, enqueueing its jobs one by one."""
        if not jobs:
            return []
        now = self.clock()
        records = [self._new_record(job_type, target_id, None, None, now) for job_type, target_id in jobs]
        session.execute(sa.insert(async_jobs), [_set_values(record) for record in records])
        events = [JobEvent(record, None) for record in records]
        self.db.after_commit(session, lambda: self.announce(events))
        return records

    def _announce_after_commit(
        self, session: SessionOrConnection, item: JobEvent, *, claimed: tuple[NextClaim, Claim] | None = None
    ) -> None:
        """Announce ``item`` when the caller's outermost transaction commits (and hand a claim made in
        it to whoever asked for it); forget both on rollback."""
        if isinstance(session, sa.Connection):  # a Core transaction: ``write_connection`` keeps the callbacks
            self.db.after_commit(session, lambda: self._on_connection_commit(item, claimed))
            return
        session.info.setdefault(_PENDING_EVENTS, []).append(item)
        if claimed is not None:
            session.info.setdefault(_PENDING_CLAIMS, []).append(claimed)
        if not session.info.get(_HOOKED):
            session.info[_HOOKED] = True
            event.listen(session, "after_commit", self._on_session_commit)
            event.listen(session, "after_soft_rollback", self._on_session_soft_rollback)

    def _on_connection_commit(self, item: JobEvent, claimed: tuple[NextClaim, Claim] | None) -> None:
        if claimed is not None:
            then, claim = claimed
            then.claim = claim
        self.announce([item])

    def _on_session_commit(self, session: Session) -> None:
        for then, claim in session.info.pop(_PENDING_CLAIMS, []):
            then.claim = claim
        self.announce(session.info.pop(_PENDING_EVENTS, []))

    @staticmethod
    def _on_session_soft_rollback(session: Session, previous: SessionTransaction) -> None:
        if previous.parent is None:  # the outermost transaction rolled back: nothing happened
            session.info.pop(_PENDING_EVENTS, None)
            session.info.pop(_PENDING_CLAIMS, None)

    def active_or_enqueue(
        self, session: SessionOrConnection, job_type: JobType, target_id: str, *, payload: str | None = None
    ) -> JobRecord:
        """The job of ``job_type`` that will still run for ``target_id``, or a new one enqueued in the
        caller's transaction (a second request while one waits or runs gets the first)."""
        active = self.active_job_id(session, job_type, target_id)
        if active is not None:
            return JobRecord.from_row(self._require(session, active))
        return self.enqueue(job_type, target_id, session=session, payload=payload)

    @staticmethod
    def active_job_id(session: SessionOrConnection, job_type: JobType, target_id: str) -> str | None:
        jobs = async_jobs.c
        return session.scalar(
            sa.select(jobs.id).where(
                jobs.job_type == job_type,
                jobs.target_id == target_id,
                jobs.status.in_(ACTIVE_JOB_STATUSES),
            )
        )

    # --- claim and finish ---------------------------------------------------------------------

    def has_runnable(self, job_types: Collection[JobType]) -> bool:
        with self.db.sessions() as session:
            return session.scalar(self._runnable_ids(job_types, self.clock()).limit(1)) is not None

    def waiting_summary(self, job_types: Collection[JobType]) -> tuple[int, datetime] | None:
        """How many jobs of ``job_types`` wait for a later time (a retry's backoff, a rate limit), and
        when the first of them is due; None when none waits."""
        now = self.clock()
        with self.db.sessions() as session:
            count, first = session.execute(
                sa.select(sa.func.count(), sa.func.min(async_jobs.c.run_after)).where(
                    async_jobs.c.status == JobStatus.PENDING,
                    async_jobs.c.job_type.in_(list(job_types)),
                    async_jobs.c.run_after > now,
                )
            ).one()
        if not count or first is None:
            return None
        return int(count), first

    def wake(self, job_types: Collection[JobType]) -> list[JobRecord]:
        """Let waiting retries of ``job_types`` run now (what made them fail was fixed)."""
        with self._unit() as (session, events):
            now = self.clock()
            rows = session.execute(
                sa.update(async_jobs)
                .where(
                    async_jobs.c.status == JobStatus.PENDING,
                    async_jobs.c.job_type.in_(list(job_types)),
                    async_jobs.c.run_after > now,
                )
                .values(run_after=None, updated_at=now)
                .returning(*async_jobs.c)
            ).all()
            records = [JobRecord.from_row(row) for row in rows]
            events.extend(JobEvent(record, JobStatus.PENDING) for record in records)
        return records

    def _runnable_ids(self, job_types: Collection[JobType], now: datetime) -> sa.Select[str]:
        return (
            sa.select(async_jobs.c.id)
            .where(
                async_jobs.c.status == JobStatus.PENDING,
                async_jobs.c.job_type.in_(list(job_types)),
                sa.or_(async_jobs.c.run_after.is_(None), async_jobs.c.run_after <= now),
            )
            .order_by(async_jobs.c.id)
        )

    def claim_next(self, session_id: str, pool: JobPool, job_types: Collection[JobType]) -> Claim | None:
        """Claim the oldest runnable job of ``job_types`` (all of ``pool``) and start its attempt."""
        claimed = self.claim_batch(session_id, pool, job_types, 1)
        return claimed[0] if claimed else None

    def claim_batch(self, session_id: str, pool: JobPool, job_types: Collection[JobType], limit: int) -> list[Claim]:
        """Claim up to ``limit`` of the oldest runnable jobs of ``job_types`` (all of ``pool``) in one
        transaction, each with its own lease and attempt, oldest first."""
        with self.db.write_cursor() as cursor:
            rows = self._claim(cursor, session_id, job_types, limit)
        claimed = claims.claims_of(rows, session_id, pool)
        self.announce([JobEvent(claim.job, JobStatus.PENDING) for claim in claimed])
        return claimed

    def _claim(self, cursor: Any, session_id: str, job_types: Collection[JobType], limit: int) -> list[claims.Row]:
        now = self.clock()
        lease = now + timedelta(seconds=self.settings.lease_seconds)
        return claims.claim_rows(cursor, session_id, job_types, now, lease, limit, skip_locked=self.db.shares_library)

    def _follow(self, cursor: Any, then: NextClaim | None) -> list[claims.Row]:
        """In a completion's transaction: claim the worker's next jobs (their rows), unless it holds one."""
        if then is None or then.held is not None:
            return []
        return self._claim(cursor, then.session_id, then.job_types, then.limit)

    def still_owned(self, session: Session, claim: Claim) -> bool:
        with claims.cursor_of(session.connection()) as cursor:
            return claims.still_owned(cursor, claim)

    def renew_leases(self, claimed: Collection[Claim]) -> set[str]:
        """Renew the claims' leases for another ``lease_seconds`` from now, in one transaction (the heartbeat of
        running jobs: ``jobs.leases``); the ids of the jobs still their claims' (the others are left alone)."""
        if not claimed:
            return set()
        lease = self.clock() + timedelta(seconds=self.settings.lease_seconds)
        with self.db.write_cursor() as cursor:
            return claims.renew_leases(cursor, claimed, lease)

    def extend_lease(self, claim: Claim) -> datetime | None:
        """``renew_leases`` of one claim: the lease's new end, or None when the job is no longer the claim's."""
        lease = self.clock() + timedelta(seconds=self.settings.lease_seconds)
        with self.db.write_cursor() as cursor:
            return lease if claims.renew_leases(cursor, [claim], lease) else None

    def take_back_expired(self, live_session: str) -> Recovered:
        """Jobs whose lease ran out while another session held them (a machine that stopped renewing: killed,
        or cut off from the server), and jobs of sessions that ended, back to the queue as interrupted, in one
        transaction, announced once it committed: ``recover_interrupted`` without the rest of a sweep."""
        from san_desktop.queue import upkeep

        with self.db.sessions() as session:  # a look first: most of the time there is nothing, and nothing to write
            found = sa.select(sa.literal(1)).where(upkeep.orphaned(live_session, self.clock())).limit(1)
            if session.scalar(found) is None:
                return Recovered()
        with self.db.write() as session:
            recovered = self.recover_interrupted(session, live_session, self.clock())
        self.announce(recovered.events)
        return recovered

    def holds(self, claim: Claim) -> bool:
        """Whether the claim's job is still its own (not cancelled or recovered), read outside any write."""
        with self.db.engine.connect() as conn, claims.cursor_of(conn) as cursor:
            return claims.still_owned(cursor, claim)

    def _finish_in_own_transaction(
        self,
        claim: Claim,
        values: dict[str, object],
        outcome: AttemptOutcome,
        error_text: str | None,
        *,
        spend_attempt: bool = True,
        then: NextClaim | None = None,
    ) -> JobRecord | None:
        """Write the attempt's result; with ``then``, ready the next job in the same transaction. A success
        that claims nothing is one statement, committed as it completes (the commonest write of a drain)."""
        held = then.held if then is not None else None
        alone = outcome is AttemptOutcome.SUCCEEDED and (then is None or held is not None)
        with self.db.write_statement() if alone else self.db.write_cursor() as cursor:
            now = self.clock()
            written, owned = claims.finish(
                cursor, claim, values, outcome, error_text, now, spend_attempt=spend_attempt, held=held
            )
            rows = self._follow(cursor, then)
        record = claims.finished_record(claim, values, now, spend_attempt=spend_attempt) if written else None
        events = [JobEvent(record, JobStatus.PROCESSING)] if record is not None else []
        if then is not None:
            then.held_owned = owned  # what the look saw stays true whatever became of the write
            if rows:
                following = claims.claims_of(rows, then.session_id, then.pool)
                then.claim, then.more = following[0], following[1:]
                events.extend(JobEvent(next_claim.job, JobStatus.PENDING) for next_claim in following)
        self.announce(events)
        return record

    def complete(self, claim: Claim, session: Session | None = None, *, then: NextClaim | None = None) -> JobRecord:
        """Mark the claim's job COMPLETED; inside ``session`` when the processor publishes its result
        in the same transaction. With ``then``, the worker's next job is readied in the same transaction
        (``NextClaim``: claims are handed over once it committed). Raises ``JobSupersededError`` if the job is
        no longer this claim's (what ``then`` asked for is done all the same)."""
        values: dict[str, object] = {
            "status": JobStatus.COMPLETED,
            "finished_at": self.clock(),
            "lease_until": None,
            "error_message": None,
            "error_kind": None,
        }
        if session is None:
            record = self._finish_in_own_transaction(claim, values, AttemptOutcome.SUCCEEDED, None, then=then)
        else:
            with claims.cursor_of(session.connection()) as cursor:
                held = then.held if then is not None else None
                now = self.clock()
                written, owned = claims.finish(cursor, claim, values, AttemptOutcome.SUCCEEDED, None, now, held=held)
                rows = self._follow(cursor, then)
            if then is not None:
                then.held_owned = owned
            record = claims.finished_record(claim, values, now) if written else None
            if record is not None:
                self._announce_after_commit(session, JobEvent(record, JobStatus.PROCESSING))
            if then is not None and rows:
                following = claims.claims_of(rows, then.session_id, then.pool)
                then.more = following[1:]
                for index, next_claim in enumerate(following):
                    claimed = JobEvent(next_claim.job, JobStatus.PENDING)
                    self._announce_after_commit(session, claimed, claimed=(then, next_claim) if index == 0 else None)
        if record is None:
            raise JobSupersededError(claim.job.id)
        return record

    def release(self, claim: Claim, reason: str) -> JobRecord | None:
        """Give a claimed job back to the queue (the app is closing): INTERRUPTED, no attempt spent."""
        values: dict[str, object] = {"status": JobStatus.PENDING, "owner_session": None, "lease_until": None}
        return self._finish_in_own_transaction(claim, values, AttemptOutcome.INTERRUPTED, reason, spend_attempt=False)

    def discard(self, claim: Claim) -> None:
        """Record the attempt of a claim whose job was taken from it (cancelled, recovered) as dropped."""
        with self.db.write_cursor() as cursor:
            claims.record_attempt(cursor, claim, AttemptOutcome.DISCARDED, None, self.clock())

    def backoff_seconds(self, attempt: int) -> float:
        """Exponential backoff with jitter: base * 2**(attempt-1), scaled by 0.5-1.5, capped."""
        raw = self.settings.backoff_base_seconds * (2 ** max(0, attempt - 1))
        return float(min(self.settings.backoff_max_seconds, raw * (0.5 + self.jitter())))

    def outcome_of(self, claim: Claim, exc: BaseException, found: Classification) -> AttemptOutcome:
        """How ``fail`` will end this attempt: cancelled, a rate limit waited out (no attempt spent), a retry
        later (transient, attempts left), or failed for good. Processors whose domain row follows its job
        (a commit request) ask this, so the two never disagree."""
        if isinstance(exc, JobCancelledError):
            return AttemptOutcome.CANCELLED
        wait = found.retry_after
        if wait is not None and wait <= self.settings.max_rate_limit_wait_seconds:
            return AttemptOutcome.RATE_LIMITED
        if found.kind == ErrorKind.TRANSIENT and claim.attempt < claim.job.max_attempts:
            return AttemptOutcome.RETRY_SCHEDULED
        return AttemptOutcome.FAILED

    def fail(self, claim: Claim, exc: BaseException, found: Classification) -> JobRecord | None:
        """Record a failed attempt as the job layer classified it (``found``), as ``outcome_of`` decides.
        None if a newer state won (result dropped)."""
        now = self.clock()
        message = error_message(exc)
        details = error_details(exc)
        outcome = self.outcome_of(claim, exc, found)
        common: dict[str, object] = {"lease_until": None, "error_message": message}
        if outcome is AttemptOutcome.CANCELLED:
            values = {**common, "status": JobStatus.CANCELLED, "finished_at": now, "error_message": None}
        elif outcome is AttemptOutcome.RATE_LIMITED:
            # waiting out a rate limit spends no attempt (see spend_attempt below)
            wait = found.retry_after or 0.0
            values = {**common, "error_kind": found.kind, "status": JobStatus.PENDING, "owner_session": None}
            values["run_after"] = now + timedelta(seconds=wait)
        elif outcome is AttemptOutcome.RETRY_SCHEDULED:
            delay = max(found.retry_after or 0.0, self.backoff_seconds(claim.attempt))
            values = {**common, "error_kind": found.kind, "status": JobStatus.PENDING, "owner_session": None}
            values["run_after"] = now + timedelta(seconds=delay)
        else:
            values = {**common, "error_kind": found.kind, "status": JobStatus.FAILED, "finished_at": now}
        record = self._finish_in_own_transaction(
            claim, values, outcome, details, spend_attempt=outcome is not AttemptOutcome.RATE_LIMITED
        )
        if record is None:
            log.info("Dropped the late result of job %s attempt %s", claim.job.id, claim.attempt)
        return record

    # --- a person's retry and cancel -------------------------------------------------------------

    def transition(
        self,
        job_ids: Iterable[str],
        new: JobStatus,
        *,
        from_statuses: Collection[JobStatus] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> BulkResult:
        """Move the jobs that are in one of ``from_statuses`` (any the table allows when None) to ``new``, in
        batches, each announced once it committed; the others are left as they were (counted as skipped).
        Every status change of a job outside a claim goes through here (``claims.transition_rows``)."""
        sources = frozenset(from_statuses) if from_statuses is not None else None
        if sources is not None:
            sources_of(new, sources)  # a pair the table refuses is a bug: said before anything is written

        def rows(cursor: Any, chunk: list[str], now: datetime) -> list[JobEvent]:
            return claims.transition_rows(cursor, chunk, now, new, sources)

        return self._in_batches(list(job_ids), rows, progress)

    def retry_jobs(self, job_ids: Iterable[str], progress: Callable[[int], None] | None = None) -> BulkResult:
        """Queue failed or cancelled jobs again, with one fresh attempt each. Of several jobs doing the same
        work (same type and target) only the newest is queued, and none when that work is queued already."""
        return self.transition(job_ids, JobStatus.PENDING, from_statuses=RETRYABLE_STATUSES, progress=progress)

    def cancel_jobs(
        self,
        job_ids: Iterable[str],
        progress: Callable[[int], None] | None = None,
        *,
        statuses: Collection[JobStatus] = ACTIVE_JOB_STATUSES,
    ) -> BulkResult:
        """Cancel the jobs still in one of ``statuses`` (waiting or running by default) when their batch is
        written; running attempts are asked to stop by the runner (their result is dropped)."""
        wanted = frozenset(statuses) & frozenset(ACTIVE_JOB_STATUSES)
        return self.transition(job_ids, JobStatus.CANCELLED, from_statuses=wanted, progress=progress)

    def retry(self, job_id: str) -> JobRecord:
        """Run a FAILED or CANCELLED job again now, with one fresh attempt: ``retry_jobs`` of one job, and
        why when it was left as it was."""
        result = self.retry_jobs([job_id])
        if result.changed:
            return result.changed[0]
        job = self.get(job_id)  # (JobNotFoundError)
        if job.status not in RETRYABLE_STATUSES:
            raise JobStateError(f"Job {job_id} is {job.status.value}; only failed or cancelled jobs can be retried.")
        with self.db.sessions() as session:
            active = self.active_job_id(session, job.job_type, job.target_id)
        if active is not None:
            raise DuplicateJobError(job.job_type, job.target_id, active)
        raise JobStateError(f"Job {job_id} changed state meanwhile; look again and retry.")

    def cancel(self, job_id: str) -> JobRecord:
        """Cancel a waiting or running job at once in the database: ``cancel_jobs`` of one job, and why
        when it was left as it was."""
        result = self.cancel_jobs([job_id])
        if result.changed:
            return result.changed[0]
        job = self.get(job_id)  # (JobNotFoundError)
        raise JobStateError(f"Job {job_id} is {job.status.value}; only waiting or running jobs can be cancelled.")

    def _in_batches(
        self,
        ids: list[str],
        batch: Callable[[Any, list[str], datetime], list[JobEvent]],
        progress: Callable[[int], None] | None,
    ) -> BulkResult:
        unique = list(dict.fromkeys(ids))
        result = BulkResult()
        for start in range(0, len(unique), BULK_BATCH):
            chunk = unique[start : start + BULK_BATCH]
            with self.db.write_cursor() as cursor:
                events = batch(cursor, chunk, self.clock())
            self.announce(events)
            result = result | BulkResult(tuple(event.job for event in events), len(chunk) - len(events))
            if progress is not None:
                progress(start + len(chunk))
        return result

    # --- the recovery sweep's upkeep (``queue.upkeep``, in the caller's transaction) ----------------

    def recover_interrupted(self, session: Session, live_session: str, now: datetime) -> Recovered:
        """Attempts a dead session left running: INTERRUPTED in their history, their jobs queued again (or
        failed, once interrupted too often). The events are the caller's to announce once it committed."""
        from san_desktop.queue import upkeep

        return upkeep.recover_interrupted(session, live_session, self.settings, now)

    def retry_transient_failures(self, session: Session, now: datetime) -> list[JobEvent]:
        from san_desktop.queue import upkeep

        return upkeep.retry_transient_failures(session, now)

    def prune(self, session: Session, limit: int) -> int:
        """Delete up to ``limit`` finished jobs older than the settings keep them (``upkeep.prune``), failed
        and cancelled ones only while no failure group is on screen. What a domain row must remember of its
        jobs it keeps itself (a scrap's stopped work), so pruning changes no behaviour."""
        from san_desktop.queue import upkeep

        completed_only = self._failures_on_screen
        return upkeep.prune(session, self.settings, self.clock(), limit, completed_only=completed_only)

    def failures_on_screen(self, shown: bool) -> None:
        """Whether a person is looking at the failure groups: a group must not shrink under their eyes
        (nor under their *Retry group*) because the sweep pruned what it held."""
        self._failures_on_screen = shown

    # --- reading ------------------------------------------------------------------------------

    @staticmethod
    def _require(session: SessionOrConnection, job_id: str) -> sa.Row[Any]:
        row = session.execute(sa.select(async_jobs).where(async_jobs.c.id == job_id)).one_or_none()
        if row is None:
            raise JobNotFoundError(job_id)
        return row

    def get(self, job_id: str) -> JobRecord:
        with self.db.sessions() as session:
            return JobRecord.from_row(self._require(session, job_id))

    def attempts(self, job_id: str) -> list[AttemptRecord]:
        """Every attempt of the job, oldest first: those that did not succeed (their rows), then the job's
        own current attempt when it runs or succeeded (as River keeps them: the row is its attempt)."""
        from san_desktop.db.models import JobAttempt

        with self.db.sessions() as session:
            job = self._require(session, job_id)
            rows = session.scalars(
                sa.select(JobAttempt).where(JobAttempt.job_id == job_id).order_by(JobAttempt.started_at)
            )
            found = [AttemptRecord.from_row(row) for row in rows]
            current = JobStatus(job.status)
            if current in (JobStatus.PROCESSING, JobStatus.COMPLETED) and job.started_at is not None:
                succeeded = current is JobStatus.COMPLETED
                found.append(
                    AttemptRecord(
                        id=job.id,
                        job_id=job.id,
                        attempt=job.attempts,
                        run_id=job.run_id or "",
                        session_id=job.owner_session or "",
                        pool=JOB_POOLS[JobType(job.job_type)],
                        started_at=job.started_at,
                        ended_at=job.finished_at if succeeded else None,
                        outcome=AttemptOutcome.SUCCEEDED if succeeded else None,
                        error_text=None,
                    )
                )
            return found

    def changed_since(self, since: datetime, limit: int = 500, after_id: str = "") -> list[JobRecord]:
        with self.db.engine.connect() as conn, claims.cursor_of(conn) as cursor:
            return claims.changed_since(cursor, since, limit, after_id)

    def jobs_named(self, ids: Iterable[str], chunk: int = 500) -> list[JobRecord]:
        wanted = list(ids)
        with self.db.engine.connect() as conn, claims.cursor_of(conn) as cursor:
            chunks = (wanted[start : start + chunk] for start in range(0, len(wanted), chunk))
            return [job for part in chunks for job in claims.jobs_named(cursor, part)]


def _set_values(record: JobRecord) -> dict[str, object]:
    """A new job's columns that are set (the others are NULL by default)."""
    return {column: value for column, value in vars(record).items() if value is not None}
