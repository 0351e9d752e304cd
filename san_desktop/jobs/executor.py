"""Running claimed jobs on a worker thread (plain code; the Qt runner only schedules it)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.enums import ErrorKind, JobPool
from san_desktop.core.errors import PermanentError, StorageFullError, is_storage_full
from san_desktop.core.redact import error_message, first_cause
from san_desktop.jobs.breaker import CircuitBreaker
from san_desktop.jobs.classify import classify, credentials_rejected
from san_desktop.jobs.registry import JobContext, ProcessorRegistry, ProgressListener
from san_desktop.queue.errors import JobCancelledError, JobInterruptedError, JobSupersededError
from san_desktop.queue.records import Claim, Classification, NextClaim
from san_desktop.queue.store import JobStore

log = logging.getLogger(__name__)

# a rejected key: the job waits for the user (the breaker holds its pool), spending no attempt
WAITS_FOR_THE_USER = Classification(ErrorKind.TRANSIENT, 0.0)


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
    ) -> None:
        self.queue = queue
        self.registry = registry
        self.session_id = session_id
        self.breakers = breakers
        self.artifacts = artifacts or ArtifactStore(queue.db.path.parent)
        self.on_progress = on_progress
        self.shutdown_event = threading.Event()
        self._running: dict[str, JobContext] = {}
        # failures that could not be written (a full disk): written before the next job is claimed
        self._unrecorded: list[tuple[Claim, Exception, Classification]] = []
        self._storage_full = False  # said once when the disk fills, once when there is room again
        self._lock = threading.Lock()

    def running_job_ids(self) -> set[str]:
        with self._lock:
            return set(self._running)

    def running_count(self, pool: JobPool) -> int:
        """Jobs of ``pool`` running now (a worker looking for work runs none)."""
        with self._lock:
            return sum(1 for context in self._running.values() if context.claim.pool is pool)

    def request_cancel(self, job_id: str) -> bool:
        with self._lock:
            context = self._running.get(job_id)
        if context is None:
            return False
        context.cancel_event.set()
        return True

    def drain(self, pool: JobPool, should_continue: Callable[[], bool] = lambda: True) -> int:
        """Run jobs of ``pool`` one after another until none is runnable, the breaker opens, or the
        app shuts down. Returns how many jobs ran. A job that completes without publishing claims the
        next one in its completion's transaction."""
        breaker = self.breakers.get(pool)
        count = 0
        try:
            count = self._drain(pool, should_continue, breaker)
        except Exception as exc:
            if not is_storage_full(exc, self.queue.db.path):
                raise
            if breaker is not None:
                breaker.release_unused()
            self._storage_is_full(exc)
            return count
        if count:
            self._storage_has_room()
        return count

    def _drain(self, pool: JobPool, should_continue: Callable[[], bool], breaker: CircuitBreaker | None) -> int:
        job_types = self.registry.job_types_of(pool)
        self._record_unrecorded()
        if not job_types or not self.queue.has_runnable(job_types):
            return 0

        def may_go_on() -> bool:
            if self.shutdown_event.is_set() or not should_continue():
                return False
            return breaker is None or breaker.try_acquire()

        count = 0
        claim: Claim | None = None
        while True:
            if claim is not None and (self.shutdown_event.is_set() or not should_continue()):
                self.queue.release(claim, "the app is closing")  # claimed with the previous job's completion
                break
            if claim is None:
                if not may_go_on():
                    break
                claim = self.queue.claim_next(self.session_id, pool, job_types)
                if claim is None:
                    if breaker is not None:
                        breaker.release_unused()
                    break
            then = NextClaim(self.session_id, pool, frozenset(job_types), ready=may_go_on)
            self.run(claim, breaker, then=then)
            count += 1
            if then.asked and then.claim is None:
                break  # nothing was runnable when it completed (the runner looks again after new work)
            claim = then.claim
        return count

    def run(
        self,
        claim: Claim,
        breaker: CircuitBreaker | None = None,
        *,
        then: NextClaim | None = None,
    ) -> None:
        """Run one claimed job and record its outcome. With ``then``, the job's completion (published
        or not) claims the next one in the same transaction if ``then.ready()``; ``then.claim`` holds
        it. A breaker slot that readiness took is given back when nothing was claimed."""
        processor = self.registry.get(claim.job.job_type)
        context = JobContext(
            claim, self.queue.db, self.queue, self.artifacts, shutdown_event=self.shutdown_event, then=then
        )
        if self.on_progress is not None:
            context.on_progress = self.on_progress
        with self._lock:
            self._running[claim.job.id] = context
        try:
            try:
                if processor is None:
                    raise PermanentError(f"No processor for {claim.job.job_type.value} jobs in this version")
                processor(context)
                if not context.published:
                    self.queue.complete(claim, then=then.wanted() if then is not None else None)
            except JobSupersededError:
                log.info("Job %s was taken from attempt %s; its result is dropped", claim.job.id, claim.attempt)
                self.queue.discard(claim)
                if breaker is not None:
                    breaker.record_neutral()
                return
            except JobInterruptedError as exc:
                self.queue.release(claim, str(exc))
                if breaker is not None:
                    breaker.record_neutral()
                return
            except Exception as exc:
                self._record_failure(claim, exc, breaker)
                return
            if breaker is not None:
                breaker.record_success()
        finally:
            context.discard_files()  # what this run wrote and did not publish (nothing else)
            with self._lock:
                self._running.pop(claim.job.id, None)
            if then is not None and then.asked and then.claim is None and breaker is not None:
                breaker.release_unused()

    def _storage_is_full(self, exc: Exception) -> None:
        """A full disk stops every claim alike: said once (it is no bug, and no traceback helps), not at
        every poll until there is room."""
        with self._lock:
            said, self._storage_full = self._storage_full, True
        if not said:
            reason = exc if isinstance(exc, StorageFullError) else StorageFullError(self.queue.db.path, str(exc))
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
