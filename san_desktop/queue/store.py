"""The job store: the one way every job is enqueued, claimed, finished, moved between statuses, recovered after a
crash, pruned, deleted and watched (issue 26), whichever database the library is on (issue 39).

Whoever changes a job (the runner's workers, the job monitor, the recovery sweep, the command line, the Trash)
does it through ``JobStore``, which checks each change against the status table (``queue.transitions``),
decides what policy decides (backoff, outcomes, how often an interruption may recur, how long finished jobs
are kept) and announces every change to its listeners once it committed (seed 001: dispatch after commit;
listeners may be called on any thread). A single retry or cancel is the bulk operation of one id. What a job's
domain row must follow (a commit request, a TIL) it follows through the records these methods return.

The SQL is the database's: ``db.backend.jobs``, a ``db.backends.base.JobsDriver`` written once for SQLite and
once for PostgreSQL (River's ``riverdriver``). Nothing here asks which database it is on. The queue itself is
the ``async_jobs`` table: nothing is ever held only in memory.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from san_desktop.core.enums import (
    ACTIVE_JOB_STATUSES,
    AttemptOutcome,
    ErrorKind,
    JobPool,
    JobStatus,
    JobType,
)
from san_desktop.core.ids import new_id
from san_desktop.core.redact import error_details, error_message
from san_desktop.core.settings import JobSettings
from san_desktop.db.database import CHANGES_CHANNEL, JOBS_CHANNEL, Database, Notified, SessionOrConnection
from san_desktop.queue.errors import (
    DuplicateJobError,
    JobCancelledError,
    JobStateError,
    JobSupersededError,
)
from san_desktop.queue.reads import JobReads
from san_desktop.queue.records import BulkResult, Claim, Classification, JobEvent, JobRecord, NextClaim
from san_desktop.queue.transitions import RETRYABLE_STATUSES, check_job_transition, sources_of
from san_desktop.queue.upkeep import SweepUpkeep

if TYPE_CHECKING:  # the ORM loads when first used: a capture needs none
    from sqlalchemy.orm import Session

    from san_desktop.db.backends.base import JobsDriver

log = logging.getLogger(__name__)

# jobs changed by one transaction of a bulk retry or cancel: the app's other writers (a capture, a worker
# finishing a job) get their turn between the batches
BULK_BATCH = 500
# What a recovery sweep hook enqueues in one transaction at most: every other writer of the app (the
# window's capture too) waits while one runs, so none may be long.
SWEEP_HOOK_BATCH = 500


class JobStore(JobReads, SweepUpkeep):
    """Every change of a job's state, in one place, on whichever database ``db`` is (see the module's docstring)."""

    def __init__(
        self,
        db: Database,
        settings: JobSettings,
        *,
        clock: Callable[[], datetime] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """``clock``: the database's (``Database.clock``: a server's time on PostgreSQL) unless given."""
        super().__init__()
        self.db = db
        self.jobs: JobsDriver = db.backend.jobs
        self.settings = settings
        self.clock = clock or db.clock
        self.jitter = jitter
        self._results_of: dict[Notified, Notified] = {}  # ``watch_others``' listeners of change notices
        self._failures_on_screen = False  # a person looks at the failure groups: failed jobs are not pruned

    # --- what other processes and machines wrote -------------------------------------------------

    def watch_others(self, callback: Notified) -> bool:
        """Call ``callback`` (from another thread) when another process or machine wrote what a runner must hear
        of, as it committed: the ids of the jobs it queued (inserted, retried, gave back) or cancelled; None when
        which is unknown (a job's result, a card, was told by its change notice: what changed is read by time).
        False when nothing will call (the caller looks by itself)."""
        if not self.db.listen(JOBS_CHANNEL, callback):
            return False

        def results(_payloads: frozenset[str] | None) -> None:
            callback(None)

        self._results_of[callback] = results
        self.db.listen(CHANGES_CHANNEL, results)
        return True

    def unwatch_others(self, callback: Notified) -> None:
        self.db.unlisten(JOBS_CHANNEL, callback)
        results = self._results_of.pop(callback, None)
        if results is not None:
            self.db.unlisten(CHANGES_CHANNEL, results)

    @property
    def others_notify(self) -> bool:
        """Whether other processes' changes are being told now (``watch_others``' calls come)."""
        return self.db.notified

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
            with self._pooled() as cursor:
                record = self._insert(cursor, job_type, target_id, payload, max_attempts)
            self.announce([JobEvent(record, None)])
            return record
        with self._cursor_in(session) as cursor:
            record = self._insert(cursor, job_type, target_id, payload, max_attempts)
        self.announce_after_commit(session, JobEvent(record, None))
        return record

    def _insert(
        self, cursor: Any, job_type: JobType, target_id: str, payload: str | None, max_attempts: int | None
    ) -> JobRecord:
        record = self._new_record(job_type, target_id, payload, max_attempts, self.clock())
        while not self.jobs.insert(cursor, record):
            existing = self.jobs.active_job_id(cursor, job_type, target_id)
            if existing is not None:
                raise DuplicateJobError(job_type, target_id, existing)
            # (the active job that refused it ended since, on another machine: it goes in now)
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
        none yet: one statement for all (a duplicate, impossible for a new target, would fail the transaction),
        announced together when it commits. An import of 10,000 notes spent most of its time, holding the GIL
        the window needs, enqueueing its jobs one by one."""
        if not jobs:
            return []
        now = self.clock()
        records = [self._new_record(job_type, target_id, None, None, now) for job_type, target_id in jobs]
        with self.jobs.cursor_in(session) as cursor:
            self.jobs.insert_many(cursor, records)
        events = [JobEvent(record, None) for record in records]
        self.db.after_commit(session, lambda: self.announce(events))
        return records

    def active_or_enqueue(
        self, session: SessionOrConnection, job_type: JobType, target_id: str, *, payload: str | None = None
    ) -> JobRecord:
        """The job of ``job_type`` that will still run for ``target_id``, or a new one enqueued in the
        caller's transaction (a second request while one waits or runs gets the first)."""
        with self._cursor_in(session) as cursor:
            active = self.jobs.active_job_id(cursor, job_type, target_id)
            found = self.jobs.get(cursor, active) if active is not None else None
        if found is not None:
            return found
        return self.enqueue(job_type, target_id, session=session, payload=payload)

    def active_job_id(self, session: SessionOrConnection, job_type: JobType, target_id: str) -> str | None:
        with self._cursor_in(session) as cursor:
            return self.jobs.active_job_id(cursor, job_type, target_id)

    # --- a worker's claim, lease and finish -----------------------------------------------------------

    def has_runnable(self, job_types: Collection[JobType]) -> bool:
        with self.jobs.reading() as cursor:
            return self.jobs.has_runnable(cursor, job_types, self.clock())

    def waiting_summary(self, job_types: Collection[JobType]) -> tuple[int, datetime] | None:
        """How many jobs of ``job_types`` wait for a later time (a retry's backoff, a rate limit), and
        when the first of them is due; None when none waits."""
        with self.jobs.reading() as cursor:
            return self.jobs.waiting_summary(cursor, job_types, self.clock())

    def wake(self, job_types: Collection[JobType]) -> list[JobRecord]:
        """Let waiting retries of ``job_types`` run now (what made them fail was fixed)."""
        with self._pooled() as cursor:
            records = self.jobs.wake(cursor, job_types, self.clock())
        self.announce([JobEvent(record, JobStatus.PENDING) for record in records])
        return records

    def claim_next(self, session_id: str, pool: JobPool, job_types: Collection[JobType]) -> Claim | None:
        """Claim the oldest runnable job of ``job_types`` (all of ``pool``) and start its attempt."""
        claimed = self.claim_batch(session_id, pool, job_types, 1)
        return claimed[0] if claimed else None

    def claim_batch(self, session_id: str, pool: JobPool, job_types: Collection[JobType], limit: int) -> list[Claim]:
        """Claim up to ``limit`` of the oldest runnable jobs of ``job_types`` (all of ``pool``) in one
        transaction, each with its own lease and attempt, oldest first."""
        taken = self.db.write_unit(lambda cursor: self._claim(cursor, session_id, job_types, limit))
        claimed = self._claims_of(taken, session_id, pool)
        self.announce([JobEvent(claim.job, JobStatus.PENDING) for claim in claimed])
        return claimed

    def _claim(self, cursor: Any, session_id: str, job_types: Collection[JobType], limit: int) -> list[JobRecord]:
        check_job_transition(JobStatus.PENDING, JobStatus.PROCESSING)
        now = self.clock()
        lease = now + timedelta(seconds=self.settings.lease_seconds)
        return self.jobs.claim(cursor, session_id, job_types, now, lease, limit)

    @staticmethod
    def _claims_of(taken: list[JobRecord], session_id: str, pool: JobPool) -> list[Claim]:
        """The claims of the jobs ``_claim`` took (oldest first), each attempt with an id of its own."""
        return [Claim(record, new_id(), record.run_id or "", session_id, pool) for record in taken]

    def _follow(self, cursor: Any, then: NextClaim | None) -> list[JobRecord]:
        """In a completion's transaction: claim the worker's next jobs, unless it holds one."""
        if then is None or then.held is not None:
            return []
        return self._claim(cursor, then.session_id, then.job_types, then.limit)

    def still_owned(self, session: Session, claim: Claim) -> bool:
        with self._cursor_in(session) as cursor:
            return self.jobs.still_owned(cursor, claim)

    def holds(self, claim: Claim) -> bool:
        """Whether the claim's job is still its own (not cancelled or recovered), read outside any write."""
        with self.jobs.reading() as cursor:
            return self.jobs.still_owned(cursor, claim)

    def renew_leases(self, claimed: Collection[Claim]) -> set[str]:
        """Renew the claims' leases for another ``lease_seconds`` from now, in one transaction (the heartbeat of
        running jobs: ``jobs.leases``); the ids of the jobs still their claims' (the others are left alone). Not
        a change of the jobs: no one is told of it."""
        if not claimed:
            return set()
        lease = self.clock() + timedelta(seconds=self.settings.lease_seconds)
        return self.db.write_unit(lambda cursor: self.jobs.renew_leases(cursor, claimed, lease))

    def extend_lease(self, claim: Claim) -> datetime | None:
        """``renew_leases`` of one claim: the lease's new end, or None when the job is no longer the claim's."""
        lease = self.clock() + timedelta(seconds=self.settings.lease_seconds)
        return lease if self.db.write_unit(lambda cursor: self.jobs.renew_leases(cursor, [claim], lease)) else None

    def _finish(
        self,
        cursor: Any,
        claim: Claim,
        values: dict[str, object],
        outcome: AttemptOutcome,
        error_text: str | None,
        now: datetime,
        *,
        spend_attempt: bool = True,
        held: Claim | None = None,
    ) -> tuple[bool, bool | None]:
        """Write the attempt's result only if the job is still this claim's, and say whether it was written;
        otherwise the attempt is recorded as DISCARDED (a late worker never overwrites a newer state). An
        attempt that succeeded is the job row's own; any other is recorded in its history, in the same
        transaction. With ``held``, the same statement looks whether that claim's job is still its own (the
        second answer; None when nothing was written).

        A success is one statement."""
        status = values.get("status")
        if isinstance(status, JobStatus):
            check_job_transition(JobStatus.PROCESSING, status)
        written, owned = self.jobs.finish(cursor, claim, values, now, spend_attempt=spend_attempt, held=held)
        if not written or outcome is not AttemptOutcome.SUCCEEDED:
            self.jobs.record_attempt(cursor, claim, outcome if written else AttemptOutcome.DISCARDED, error_text, now)
        return written, owned

    @staticmethod
    def _finished_record(
        claim: Claim, values: dict[str, Any], now: datetime, *, spend_attempt: bool = True
    ) -> JobRecord:
        """The row ``_finish`` wrote, made from the claim rather than read back: while the job was the claim's
        nothing else changed its row but its lease (every change of a job goes through this store, and each is
        conditional on its status; ``extend_lease`` is the claim's own), and every finish sets the lease, so it
        is the claimed row with what the finish set."""
        attempts = claim.job.attempts if spend_attempt else claim.job.attempts - 1
        return JobRecord(**{**vars(claim.job), **values, "updated_at": now, "attempts": attempts})

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

        def unit(cursor: Any) -> tuple[datetime, bool, bool | None, list[JobRecord]]:
            now = self.clock()  # (in the transaction: on one file, times go as the commits do)
            written, owned = self._finish(
                cursor, claim, values, outcome, error_text, now, spend_attempt=spend_attempt, held=held
            )
            return now, written, owned, self._follow(cursor, then)

        now, written, owned, taken = self.db.write_unit(unit)
        record = self._finished_record(claim, values, now, spend_attempt=spend_attempt) if written else None
        events = [JobEvent(record, JobStatus.PROCESSING)] if record is not None else []
        if then is not None:
            then.held_owned = owned  # what the look saw stays true whatever became of the write
            if taken:
                following = self._claims_of(taken, then.session_id, then.pool)
                then.claim, then.more = following[0], following[1:]
                events.extend(JobEvent(next_claim.job, JobStatus.PENDING) for next_claim in following)
        self.announce(events)
        return record

    def _completed(self) -> dict[str, object]:
        """What a completion sets."""
        return {
            "status": JobStatus.COMPLETED,
            "finished_at": self.clock(),
            "lease_until": None,
            "error_message": None,
            "error_kind": None,
        }

    def complete(self, claim: Claim, session: Session | None = None, *, then: NextClaim | None = None) -> JobRecord:
        """Mark the claim's job COMPLETED; inside ``session`` when the processor publishes its result
        in the same transaction. With ``then``, the worker's next job is readied in the same transaction
        (``NextClaim``: claims are handed over once it committed). Raises ``JobSupersededError`` if the job is
        no longer this claim's (what ``then`` asked for is done all the same)."""
        values = self._completed()
        if session is None:
            record = self._finish_in_own_transaction(claim, values, AttemptOutcome.SUCCEEDED, None, then=then)
        else:
            with self._cursor_in(session) as cursor:
                held = then.held if then is not None else None
                now = self.clock()
                written, owned = self._finish(cursor, claim, values, AttemptOutcome.SUCCEEDED, None, now, held=held)
                taken = self._follow(cursor, then)
            if then is not None:
                then.held_owned = owned
            record = self._finished_record(claim, values, now) if written else None
            if record is not None:
                self.announce_after_commit(session, JobEvent(record, JobStatus.PROCESSING))
            if then is not None and taken:
                following = self._claims_of(taken, then.session_id, then.pool)
                then.more = following[1:]
                for index, next_claim in enumerate(following):
                    claimed = JobEvent(next_claim.job, JobStatus.PENDING)
                    self.announce_after_commit(session, claimed, claimed=(then, next_claim) if index == 0 else None)
        if record is None:
            raise JobSupersededError(claim.job.id)
        return record

    def complete_later(self, claim: Claim, told: Callable[[Claim, BaseException | None], None]) -> None:
        """``complete`` without waiting for the write, for a job whose run wrote nothing of its own (no result to
        lose: a crash before the write only runs it again). Written in the order handed over; announced once
        written. Finding the job no longer this claim's, the
        attempt is recorded as dropped, as ``complete`` does. ``told(claim, error)``, on another thread, once it
        was written (``error`` None) or failed (the disk full, the server away: the job is still the claim's,
        running)."""
        values = self._completed()

        def unit(cursor: Any) -> tuple[datetime, bool]:
            now = self.clock()
            written, _ = self._finish(cursor, claim, values, AttemptOutcome.SUCCEEDED, None, now)
            return now, written

        def written(result: tuple[datetime, bool] | None, error: BaseException | None) -> None:
            if error is not None or result is None:
                told(claim, error or RuntimeError("no answer"))
                return
            if result[1]:
                self.announce([JobEvent(self._finished_record(claim, values, result[0]), JobStatus.PROCESSING)])
            else:
                log.info("Job %s was taken from attempt %s; its result is dropped", claim.job.id, claim.attempt)
            told(claim, None)

        self.db.write_unit_later(unit, written)

    def release(self, claim: Claim, reason: str) -> JobRecord | None:
        """Give a claimed job back to the queue (the app is closing): INTERRUPTED, no attempt spent."""
        values: dict[str, object] = {"status": JobStatus.PENDING, "owner_session": None, "lease_until": None}
        return self._finish_in_own_transaction(claim, values, AttemptOutcome.INTERRUPTED, reason, spend_attempt=False)

    def discard(self, claim: Claim) -> None:
        """Record the attempt of a claim whose job was taken from it (cancelled, recovered) as dropped."""
        self.db.write_unit(
            lambda cursor: self.jobs.record_attempt(cursor, claim, AttemptOutcome.DISCARDED, None, self.clock())
        )

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

    # --- a person's retry and cancel (one job is a bulk of one) ----------------------------------------

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
        Back to PENDING, only the newest job per (type, target) of a batch moves, and none whose work is
        queued already (at most one job per work will still run). Every status change of a job outside a
        claim goes through here; PROCESSING is a claim's."""
        if new is JobStatus.PROCESSING:
            raise ValueError("only a claim starts a job: it starts the attempt and takes the lease")
        # a pair the table refuses is a bug: said before anything is written
        sources = sources_of(new, frozenset(from_statuses) if from_statuses is not None else None)

        def rows(cursor: Any, chunk: list[str], now: datetime) -> list[JobEvent]:
            if not sources:
                return []
            return [JobEvent(record, old) for record, old in self.jobs.transition(cursor, chunk, new, sources, now)]

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
        with self.jobs.reading() as cursor:
            active = self.jobs.active_job_id(cursor, job.job_type, job.target_id)
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
            events = self.db.write_unit(lambda cursor: batch(cursor, chunk, self.clock()))  # noqa: B023 (run at once)
            self.announce(events)
            result = result | BulkResult(tuple(event.job for event in events), len(chunk) - len(events))
            if progress is not None:
                progress(start + len(chunk))
        return result

    def delete_jobs_of(self, session: SessionOrConnection, target_ids: Iterable[str]) -> int:
        """Delete the jobs of targets that go for good (scraps purged from the Trash), in the caller's
        transaction; how many went. Those still waiting or running are cancelled first, as the status table
        allows, and announced once the caller committed: a running attempt is asked to stop, and its row stays
        for its worker to find (the sweep prunes it later); a waiting one is no longer shown as waiting."""
        targets = list(dict.fromkeys(target_ids))
        sources = sources_of(JobStatus.CANCELLED, frozenset(ACTIVE_JOB_STATUSES))
        deleted = 0
        with self._cursor_in(session) as cursor:
            now = self.clock()
            for start in range(0, len(targets), BULK_BATCH):
                chunk = targets[start : start + BULK_BATCH]
                active = self.jobs.ids_of_targets(cursor, chunk, ACTIVE_JOB_STATUSES)
                moved = self.jobs.transition(cursor, active, JobStatus.CANCELLED, sources, now) if active else []
                running = {record.id for record, old in moved if old is JobStatus.PROCESSING}
                deleted += self.jobs.delete_of_targets(cursor, chunk, running)
                for record, old in moved:
                    self.announce_after_commit(session, JobEvent(record, old))
        return deleted
