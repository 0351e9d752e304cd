"""Which code runs each job type, and what that code gets to work with.

Processors are plain functions called on a worker thread with a ``JobContext``: plain values, the
database handle and cooperative cancellation; never widgets or ORM objects from another thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from san_desktop.artifacts.store import ArtifactStore, RunFiles
from san_desktop.core.enums import JOB_POOLS, JobPool, JobType
from san_desktop.db.database import Database
from san_desktop.queue.errors import JobCancelledError, JobInterruptedError, JobSupersededError
from san_desktop.queue.records import Claim, JobRecord, NextClaim
from san_desktop.queue.store import JobStore
from san_desktop.services.recovery.sweep import SweepHook

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobProgress:
    """How far a multi-step job is: step ``index`` (1-based) of ``total``, named ``step``."""

    job_id: str
    job_type: JobType
    target_id: str
    step: str
    index: int
    total: int


ProgressListener = Callable[[JobProgress], None]


def _ignore_progress(_progress: JobProgress) -> None:
    return None


@dataclass
class JobContext:
    """What a processor works with on its worker thread. Files it writes go through ``files`` (named with
    this run's id); the executor deletes those it never published, so a failed run leaves nothing."""

    claim: Claim
    db: Database
    queue: JobStore
    artifacts: ArtifactStore | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    shutdown_event: threading.Event = field(default_factory=threading.Event)
    on_progress: ProgressListener = _ignore_progress
    published: bool = False
    then: NextClaim | None = None  # the drain's next claim, made by this job's completion when it can
    _files: RunFiles | None = None

    @property
    def job(self) -> JobRecord:
        return self.claim.job

    @property
    def run_id(self) -> str:
        """Fresh for every execution: files a run writes carry it, so retries never clobber each other."""
        return self.claim.run_id

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def raise_if_cancelled(self) -> None:
        """Call between steps (and never inside a transaction): stops a cancelled job, or one that the
        closing app interrupts (it goes back to the queue), cooperatively."""
        if self.cancel_event.is_set():
            raise JobCancelledError(f"job {self.job.id} was cancelled")
        if self.shutdown_event.is_set():
            raise JobInterruptedError(f"job {self.job.id} was interrupted by the app closing")

    @property
    def files(self) -> RunFiles:
        """This run's files (created on first use)."""
        if self._files is None:
            if self.artifacts is None:
                raise RuntimeError("this job runs without an artifact store")
            self._files = self.artifacts.run(self.run_id)
        return self._files

    def progress(self, step: str, index: int, total: int) -> None:
        """Say which step runs now (the runner announces it to the monitor and the pages). The job's lease is
        the executor's to renew while it runs (``jobs.leases``), whatever the processor says."""
        job = self.job
        self.on_progress(JobProgress(job.id, job.job_type, job.target_id, step, index, total))

    @contextmanager
    def checkpoint(self) -> Iterator[Session]:
        """One short write transaction for a finished step's results, under the same ownership guard as
        ``publish`` (a late or superseded attempt writes nothing); files written so far are kept."""
        self.raise_if_cancelled()
        with self.db.write() as session:
            if not self.queue.still_owned(session, self.claim):
                raise JobSupersededError(self.job.id)
            yield session
        if self._files is not None:
            self._files.publish_pending()

    @contextmanager
    def publish(self) -> Iterator[Session]:
        """One short write transaction for the job's results that also completes the job, so a result is
        stored exactly when the job is COMPLETED. If the job is no longer this attempt's (cancelled,
        recovered after a crash, finished by a newer run) nothing is written."""
        self.raise_if_cancelled()
        with self.db.write() as session:
            if not self.queue.still_owned(session, self.claim):
                raise JobSupersededError(self.job.id)
            yield session
            self.queue.complete(self.claim, session, then=self.then.wanted() if self.then is not None else None)
        self.published = True
        if self._files is not None:
            self._files.publish_pending()

    def discard_files(self) -> None:
        """Delete what this run wrote and did not publish (the executor calls it when a run ends)."""
        if self._files is not None:
            self._files.discard()


Processor = Callable[[JobContext], None]


class ProcessorRegistry:
    """Maps job types to processors. Production code registers the real ones; tests and benchmarks
    register their own for the existing job types."""

    def __init__(self) -> None:
        self._processors: dict[JobType, Processor] = {}
        self._sweep_hooks: list[SweepHook] = []
        self._stop_hooks: list[Callable[[], None]] = []
        self._build: Callable[[], ProcessorRegistry] | None = None
        self._build_lock = threading.RLock()

    @classmethod
    def deferred(cls, build: Callable[[], ProcessorRegistry]) -> ProcessorRegistry:
        """A registry whose processors and hooks ``build`` makes on first use, on whichever thread asks
        first: the runner's first sweep, off the GUI thread (importing the product's processors, with
        numpy, httpx and dulwich, took a third of a second before the window's first frame)."""
        registry = cls()
        registry._build = build
        return registry

    def _loaded(self) -> ProcessorRegistry:
        with self._build_lock:  # a second thread waits until the first has built it
            build, self._build = self._build, None
            if build is not None:
                try:
                    built = build()
                except BaseException:
                    self._build = build  # tried again on the next use
                    raise
                self._processors = {**built._processors, **self._processors}
                self._sweep_hooks[:0] = built._sweep_hooks
                self._stop_hooks[:0] = built._stop_hooks
        return self

    @property
    def sweep_hooks(self) -> list[SweepHook]:
        return self._loaded()._sweep_hooks

    @property
    def stop_hooks(self) -> list[Callable[[], None]]:
        """Called (from any thread) when the runner stops: each cuts short what a running job may wait on
        for long (a slow AI server's answer), so that the job returns and goes back to the queue."""
        return self._loaded()._stop_hooks

    def stop(self) -> None:
        """Call the stop hooks; those of a deferred registry only if it was built (unbuilt, nothing ran)."""
        with self._build_lock:
            hooks = [] if self._build is not None else list(self._stop_hooks)
        for hook in hooks:
            try:
                hook()
            except Exception:
                log.exception("A job stop hook failed")

    def register(self, job_type: JobType, processor: Processor) -> None:
        self._loaded()._processors[job_type] = processor

    def get(self, job_type: JobType) -> Processor | None:
        return self._loaded()._processors.get(job_type)

    def job_types(self) -> set[JobType]:
        return set(self._loaded()._processors)

    def job_types_of(self, pool: JobPool) -> frozenset[JobType]:
        return frozenset(t for t in self._loaded()._processors if JOB_POOLS[t] == pool)
