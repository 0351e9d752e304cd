"""Running claimed jobs on a worker thread (plain code; the Qt runner only schedules it)."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.enums import ErrorKind, JobPool, JobStatus
from san_desktop.core.errors import DatabaseUnreachableError, PermanentError, StorageFullError, is_storage_full
from san_desktop.core.redact import error_message, first_cause
from san_desktop.jobs.breaker import CircuitBreaker
from san_desktop.jobs.classify import classify, credentials_rejected
from san_desktop.jobs.leases import LeaseKeeper
from san_desktop.jobs.outage import Outage
from san_desktop.jobs.registry import JobContext, ProcessorRegistry, ProgressListener
from san_desktop.queue.errors import JobCancelledError, JobInterruptedError, JobSupersededError
from san_desktop.queue.records import Claim, Classification, JobEvent, NextClaim
from san_desktop.queue.store import JobStore
from san_desktop.services.artifact_stores import artifact_store

log = logging.getLogger(__name__)

# A worker claims several jobs at once only while its pool's jobs are quick, where a claim's transaction is a
# large share of what a job costs. The jobs it holds wait, claimed, behind the one that runs, where no other
# worker can take them; and a worker that seldom waits for the database seldom lets the GUI thread have the
# GIL (the window lagged behind one running millisecond jobs in batches). So it holds about BATCH_SECONDS of
# work by the pool's pace (the work of its recent jobs, smoothed), MAX_BATCH at most: jobs of a millisecond
# or more (an embedded model's analysis, an AI server's, a GitHub commit) are claimed one at a time, as is a
# pool's first job, whose pace is not known yet. A slow job among quick ones holds the others of its batch
# back once; the pace it sets makes the next claims single.
MAX_BATCH = 16
BATCH_SECONDS = 0.001
PACE_WEIGHT = 0.25  # the newest job's weight in the pace
# cancellations of jobs not running here that a worker remembers, for the jobs it holds claimed (``request_cancel``)
CANCELLED_REMEMBERED = 10_000
# how long a drain waits at most for the completions it handed over to be written (a bound: they are answered,
# written or failed, within a connection's timeout)
LANDING_SECONDS = 60

# a rejected key: the job waits for the user (the breaker holds its pool), spending no attempt
WAITS_FOR_THE_USER = Classification(ErrorKind.TRANSIENT, 0.0)
# why a job goes back to the queue with no attempt spent (its attempt's history says it)
CLOSING = "the app closed while it ran"
SERVER_AWAY = "the library's server could not be reached"


class JobExecutor:
    """Claims and runs jobs of one pool at a time for one app session. Thread-safe."""

    def __init__(
        self,
        queue: JobStore,
        registry: ProcessorRegistry,
        session_id: str,
        breakers: dict[JobPool, CircuitBreaker],
        *,
        artifacts: ArtifactStore | None = None,
        on_progress: ProgressListener | None = None,
        timer: Callable[[], float] = time.perf_counter,
        outage: Outage | None = None,
    ) -> None:
        """``timer``: seconds, for how long jobs' work takes (the pace that sizes a batch of claims).
        ``outage``: the library's server out of reach, shared with the runner (its own otherwise)."""
        self.queue = queue
        self.registry = registry
        self.session_id = session_id
        self.breakers = breakers
        self.artifacts = artifacts or artifact_store(queue.db)
        self.on_progress = on_progress
        self.shutdown_event = threading.Event()
        self.outage = outage or Outage()
        self.leases = LeaseKeeper(queue, self.outage, self.shutdown_event)
        self._running: dict[str, JobContext] = {}
        # claims that could not be given back to the queue (the server was away): tried again by ``give_back_held``
        self._stranded: dict[str, Claim] = {}
        # failures that could not be written (a full disk): written before the next job is claimed
        self._unrecorded: list[tuple[Claim, Exception, Classification]] = []
        self._storage_full = False  # said once when the disk fills, once when there is room again
        self.timer = timer
        self._pace: dict[JobPool, float] = {}  # seconds the work of a job of the pool took lately (smoothed)
        self._cancelled: dict[str, None] = {}  # jobs cancelled while not running here (oldest first)
        self._lock = threading.Lock()
        # completions handed over and not written yet, by the thread whose drain handed them over
        self._landing = threading.Condition(self._lock)
        self._landing_count: dict[int, int] = {}
        queue.add_listener(self._on_job_event)  # this process's cancellations, as they commit

    def shut_down(self) -> None:
        """The app is closing: no job starts from now on, running ones stop at their next step, and their
        leases are no longer renewed (what is still running when the runner stops waiting is given back)."""
        self.shutdown_event.set()
        self.leases.halt()
        self.queue.remove_listener(self._on_job_event)

    def running_job_ids(self) -> set[str]:
        with self._lock:
            return set(self._running)

    def give_back_held(self, reason: str = CLOSING) -> set[str]:
        """Give the jobs still running (a stop that could not wait for them) and those left to give back to the
        queue now, as interrupted; what a late run of theirs would write is dropped then. The ids of those that
        could not be given back (the server away): another machine takes them once their leases run out, this
        one at its next start."""
        with self._lock:
            claims = [context.claim for context in self._running.values()]
            claims += [claim for job_id, claim in self._stranded.items() if job_id not in self._running]
        left: set[str] = set()
        for claim in claims:
            if self.outage.down:  # (each try would wait for the server's answer, up to its connect timeout)
                left.add(claim.job.id)
                continue
            try:
                self.queue.release(claim, reason)
            except Exception as exc:
                away = self.queue.db.unreachable(exc)
                if away is None:
                    log.warning("Could not give job %s back to the queue", claim.job.id, exc_info=True)
                else:
                    self.outage.failed(away)
                left.add(claim.job.id)
                continue
            with self._lock:
                self._stranded.pop(claim.job.id, None)
        return left

    def running_count(self, pool: JobPool) -> int:
        """Jobs of ``pool`` running now (a worker looking for work runs none)."""
        with self._lock:
            return sum(1 for context in self._running.values() if context.claim.pool is pool)

    def request_cancel(self, job_id: str) -> bool:
        """A running job is asked to stop; one that is not running yet is remembered, so that a worker holding
        it claimed does not start it (``_not_cancelled``). False: it was not running."""
        with self._lock:
            context = self._running.get(job_id)
            if context is None:
                self._cancelled[job_id] = None
                while len(self._cancelled) > CANCELLED_REMEMBERED:
                    del self._cancelled[next(iter(self._cancelled))]
        if context is None:
            return False
        context.cancel_event.set()
        return True

    def _on_job_event(self, event: JobEvent) -> None:
        if event.job.status is JobStatus.CANCELLED:
            self.request_cancel(event.job.id)

    def _not_cancelled(self, claim: Claim) -> bool:
        with self._lock:
            return claim.job.id not in self._cancelled

    def drain(self, pool: JobPool, should_continue: Callable[[], bool] = lambda: True) -> int:
        """Run jobs of ``pool`` one after another until none is runnable, the breaker opens, the pool is
        paused or the app shuts down. Returns how many jobs ran. A job's completion, published or not,
        readies the next one in its transaction: claims the next jobs (several when the pool's jobs are
        quick), or looks whether the next one held is still ours. Jobs held when the drain stops are given
        back to the queue."""
        breaker = self.breakers.get(pool)
        count = 0
        try:
            count = self._drain(pool, should_continue, breaker)
        except Exception as exc:
            away = self.queue.db.unreachable(exc)
            if away is not None:  # said once for the whole outage; the runner tries again after a while
                self.outage.failed(away)
            elif not is_storage_full(exc, self.queue.db.path):
                raise
            else:
                self._storage_is_full(exc)
            if breaker is not None:
                breaker.release_unused()
            return count
        if count:
            self._storage_has_room()
        return count

    def _drain(self, pool: JobPool, should_continue: Callable[[], bool], breaker: CircuitBreaker | None) -> int:
        job_types = self.registry.job_types_of(pool)
        if not job_types:
            return 0
        tried_at = self.outage.now()
        self._give_back_stranded()
        self._record_unrecorded()
        runnable = self.queue.has_runnable(job_types)
        self.outage.passed(tried_at)  # (the server answered, if it had been away)
        if not runnable:
            return 0

        def stopping() -> bool:
            return self.shutdown_event.is_set() or not should_continue()

        def may_go_on() -> bool:
            if stopping():
                return False
            return breaker is None or breaker.try_acquire()

        count = 0
        # Claimed and not started yet, the next to run first. ``ready``: whether the first may start was asked
        # already (when it was claimed); ``owned``: the first is known to be still ours (it was just claimed,
        # or the completion before it looked).
        hand: deque[Claim] = deque()
        ready = owned = False
        try:
            while True:
                if not hand:
                    if not may_go_on():
                        break
                    hand.extend(self.queue.claim_batch(self.session_id, pool, job_types, self._batch_size(pool)))
                    if not hand:
                        if breaker is not None:
                            breaker.release_unused()
                        break
                elif not owned and not self.queue.holds(hand[0]):
                    self.queue.discard(hand.popleft())  # cancelled (or recovered) while held: it does not run
                    continue
                elif stopping() or not (ready or may_go_on()):
                    break  # the app is closing, the pool was paused or its breaker opened: the hand goes back
                claim = hand.popleft()
                then = NextClaim(
                    self.session_id,
                    pool,
                    frozenset(job_types),
                    ready=may_go_on,
                    limit=1 if hand else self._batch_size(pool),  # (a held job is looked at, not claimed)
                    held=hand[0] if hand else None,
                )
                self.run(claim, breaker, then=then)
                count += 1
                if hand:
                    ready, owned = False, then.held_owned is True
                    continue
                if then.asked and then.claim is None:
                    break  # nothing was runnable when it completed (the runner looks again after new work)
                hand.extend(then.claimed())
                ready = owned = True
        finally:
            self._give_back(hand)
            self._await_completions()
        return count

    def _give_back(self, hand: deque[Claim]) -> None:
        """Jobs claimed and not started go back to the queue: INTERRUPTED, no attempt spent."""
        reason = "the app is closing" if self.shutdown_event.is_set() else "its pool was paused"
        for claim in hand:
            try:
                self.queue.release(claim, reason)
            except Exception as exc:  # the disk is full, say: the next start's recovery gives it back
                if self.queue.db.unreachable(exc) is not None:
                    with self._lock:
                        self._stranded[claim.job.id] = claim  # given back when the server answers again
                else:
                    log.warning("Could not give job %s back to the queue", claim.job.id, exc_info=True)

    def _give_back_stranded(self) -> None:
        """What could not be given back while the server was away goes back first (before any claim): a job
        left PROCESSING in this live session would never run again."""
        with self._lock:
            stranded = list(self._stranded.values())
        for claim in stranded:
            self.queue.release(claim, SERVER_AWAY)  # (the server away still: the drain stops, said once)
            with self._lock:
                self._stranded.pop(claim.job.id, None)

    def _note_pace(self, pool: JobPool, took: float) -> None:
        with self._lock:
            pace = self._pace.get(pool)
            self._pace[pool] = took if pace is None else pace + PACE_WEIGHT * (took - pace)

    def _batch_size(self, pool: JobPool) -> int:
        """How many jobs of ``pool`` a worker claims at once, by the pace of its recent jobs (MAX_BATCH)."""
        with self._lock:
            pace = self._pace.get(pool)
        if pace is None:
            return 1
        return max(1, min(MAX_BATCH, int(BATCH_SECONDS / max(pace, 1e-6))))

    def run(
        self,
        claim: Claim,
        breaker: CircuitBreaker | None = None,
        *,
        then: NextClaim | None = None,
    ) -> None:
        """Run one claimed job and record its outcome. With ``then``, the job's completion (published
        or not) readies the next one in the same transaction (``NextClaim``). A breaker slot that
        readiness took is given back when nothing was claimed."""
        began = self.timer()
        processor = self.registry.get(claim.job.job_type)
        context = JobContext(
            claim, self.queue.db, self.queue, self.artifacts, shutdown_event=self.shutdown_event, then=then
        )
        if self.on_progress is not None:
            context.on_progress = self.on_progress
        with self._lock:
            self._running[claim.job.id] = context
        self.leases.add(claim)
        try:
            try:
                if processor is None:
                    raise PermanentError(f"No processor for {claim.job.job_type.value} jobs in this version")
                try:
                    processor(context)
                finally:
                    self._note_pace(claim.pool, self.timer() - began)
                if not context.published and then is not None and then.held is not None:
                    # A quick job that wrote nothing, with the next in the worker's hand: its completion is
                    # written with others' while the next runs (a crash before that only runs it again). Whether
                    # the next one was cancelled meanwhile is known from the cancellations this session heard of;
                    # one it has not heard of yet runs, and its result is dropped (a claim's writes are
                    # conditional on the job being still its own).
                    self._complete_later(claim)
                    then.held_owned = self._not_cancelled(then.held)
                elif not context.published:
                    if then is not None:
                        then.limit = self._batch_size(claim.pool)  # knowing this job's pace too
                    self.queue.complete(claim, then=then.wanted() if then is not None else None)
            except JobSupersededError:
                log.info("Job %s was taken from attempt %s; its result is dropped", claim.job.id, claim.attempt)
                self.queue.discard(claim)
                if breaker is not None:
                    breaker.record_neutral()
                return
            except JobInterruptedError:
                self._give_back_later(claim, None, breaker)  # (the app is closing)
                return
            except Exception as exc:
                away = self.queue.db.unreachable(exc)
                if away is not None or self.shutdown_event.is_set():
                    # not the job's failure: the server went away under it, or the closing app cut its call
                    self._give_back_later(claim, away, breaker)
                    return
                self._record_failure(claim, exc, breaker)
                return
            if breaker is not None:
                breaker.record_success()
        finally:
            context.discard_files()  # what this run wrote and did not publish (nothing else)
            self.leases.remove(claim)
            with self._lock:
                self._running.pop(claim.job.id, None)
            if then is not None and then.asked and then.claim is None and breaker is not None:
                breaker.release_unused()

    def _complete_later(self, claim: Claim) -> None:
        """``JobStore.complete_later``, counted for this thread's drain, which waits for it before it returns."""
        thread = threading.get_ident()
        with self._lock:
            self._landing_count[thread] = self._landing_count.get(thread, 0) + 1

        def told(claim: Claim, error: BaseException | None) -> None:
            if error is not None:
                self._not_completed(claim, error)
            with self._landing:
                left = self._landing_count[thread] - 1
                if left:
                    self._landing_count[thread] = left
                else:
                    del self._landing_count[thread]
                    self._landing.notify_all()

        self.queue.complete_later(claim, told)

    def _await_completions(self) -> None:
        """A drain returns once the completions it handed over were written: what ran is then completed."""
        thread = threading.get_ident()
        with self._landing:
            if not self._landing.wait_for(lambda: thread not in self._landing_count, timeout=LANDING_SECONDS):
                log.warning("Completions of jobs that ran were not written within %s s", LANDING_SECONDS)

    def _not_completed(self, claim: Claim, error: BaseException) -> None:
        """A completion written later failed (the disk full, the server away): the job, which wrote nothing, goes
        back to the queue before this executor claims again (``_give_back_stranded``), and runs again."""
        log.warning("Could not record the completion of job %s; it runs again: %s", claim.job.id, error)
        away = self.queue.db.unreachable(error)
        if away is not None:
            self.outage.failed(away)
        with self._lock:
            self._stranded[claim.job.id] = claim

    def _give_back_later(
        self, claim: Claim, away: DatabaseUnreachableError | None, breaker: CircuitBreaker | None
    ) -> None:
        """The job goes back to the queue with no attempt spent, as interrupted: at once when the app is
        closing (``CLOSING``); when the server went away under it, as soon as the server answers again (this
        thread waits for that, backing off, until the app closes). Whatever it did before is dropped (its
        publish either committed, and the job is no longer the claim's, or it did not)."""
        if breaker is not None:
            breaker.record_neutral()
        while True:
            if away is not None:
                self.outage.failed(away)
                if self.shutdown_event.wait(self.outage.seconds_to_wait()):
                    break
            tried_at = self.outage.now()
            try:
                self.queue.release(claim, CLOSING if self.shutdown_event.is_set() else SERVER_AWAY)
            except Exception as exc:
                away = self.queue.db.unreachable(exc)
                if away is None:
                    log.warning("Could not give job %s back to the queue", claim.job.id, exc_info=True)
                    return
                continue
            self.outage.passed(tried_at)
            return
        with self._lock:
            self._stranded[claim.job.id] = claim  # the closing runner tries once more (``give_back_held``)

    def _storage_is_full(self, exc: Exception) -> None:
        """A full disk stops every claim alike: said once (it is no bug, and no traceback helps), not at
        every poll until there is room."""
        with self._lock:
            said, self._storage_full = self._storage_full, True
        if not said:
            reason = exc if isinstance(exc, StorageFullError) else StorageFullError(self.queue.db.where, str(exc))
            log.warning("%s Jobs wait until there is room.", reason)

    def _storage_has_room(self) -> None:
        """Jobs ran, and wrote what they did."""
        with self._lock:
            if self._unrecorded:
                return
            was, self._storage_full = self._storage_full, False
        if was:
            log.info("The disk has room again: jobs run again")

    def _record_unrecorded(self) -> None:
        with self._lock:
            waiting, self._unrecorded = self._unrecorded, []
        for index, (claim, exc, found) in enumerate(waiting):
            try:
                self.queue.fail(claim, exc, found)
            except Exception:
                with self._lock:
                    self._unrecorded.extend(waiting[index:])
                return

    def _record_failure(self, claim: Claim, exc: Exception, breaker: CircuitBreaker | None) -> None:
        rejected = credentials_rejected(exc)
        if not isinstance(exc, JobCancelledError):
            # a rejected key is said in our words (a server may quote the key back): the server's, logged
            detail = f" ({rejected.__cause__})" if rejected is not None and rejected.__cause__ is not None else ""
            log.warning(
                "Job %s (%s) attempt %s failed: %s%s", claim.job.id, claim.job.job_type, claim.attempt, exc, detail
            )
        found = classify(exc)
        if rejected is not None and breaker is None:
            rejected = None  # nothing can pause this pool: the job fails, as any permanent error does
        if rejected is not None:
            found = WAITS_FOR_THE_USER
        try:
            self.queue.fail(claim, exc, found)
        except Exception as record_error:
            away = self.queue.db.unreachable(record_error)
            if away is not None:
                self._give_back_later(claim, away, breaker)  # (its failure is not recorded: it runs again)
                return
            if is_storage_full(record_error):
                log.warning("Could not record the failure of job %s (disk full); will try again", claim.job.id)
                with self._lock:
                    self._unrecorded.append((claim, exc, found))
            else:
                # database gone? recovery re-queues it at the next start
                log.exception("Could not record the failure of job %s", claim.job.id)
        if breaker is None:
            return
        if rejected is not None:
            breaker.hold(str(rejected))
        elif not isinstance(exc, JobCancelledError) and found.kind is ErrorKind.TRANSIENT:
            breaker.record_failure(first_cause(error_message(exc)))
        else:
            breaker.record_neutral()
