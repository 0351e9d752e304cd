"""One worker base (after superqt's ``WorkerBase``) and the job runner's workers: what runs on its pools' threads (a
pool's jobs, the recovery sweep, the look for jobs whose lease ran out, the read of other processes' job changes).
The window's background operations (``ui.common.ops``) run on the same base.

A ``Worker`` runs its ``work`` on a pool thread and reports once, on the thread that made it (the GUI thread): what
``work`` returned (``returned``), or what ``failed`` made of its exception, or the exception itself
(``errored``). Our own rather than superqt's: superqt would bring qtpy and a dependency for forty lines, and its
base starts workers on the global thread pool, keeps them in a class-wide set and swaps the process's
``warnings.showwarning`` from the worker thread; the runner keeps its own pools and references instead."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, QRunnable, Signal

from san_desktop.core.enums import JobPool
from san_desktop.core.settings import JobSettings
from san_desktop.core.thread_priority import lower_current_thread
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.outage import Outage
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.recovery.sweep import SweepReport, sweep

log = logging.getLogger(__name__)

CHANGES_PAGE = 500
MOST_CHANGES_READ = 50_000  # a read that finds more leaves the rest to the next one


def emit_from_worker(signal: Any, *args: Any) -> None:
    """Emit a worker's report from its thread; a worker that finishes after its signals' object is gone (the app
    quit while it ran, and its runner or its window was deleted) reports to nobody, and raises nothing on its
    thread (where the error would reach the crash handler)."""
    try:
        signal.emit(*args)
    except RuntimeError:
        log.debug("A worker finished after its receiver was gone")


R = TypeVar("R")


class WorkerSignals(QObject):
    """Made in the worker's ``__init__`` on the GUI thread, so receivers run on the GUI thread (created inside
    ``run``, they would run on the worker's).

    Signals:
        returned(object): what ``work`` returned (or ``failed`` made of its exception).
        errored(object): the exception ``work`` raised, when ``failed`` did not take it.
    """

    returned = Signal(object)
    errored = Signal(object)


class Worker(QRunnable, Generic[R]):
    """Runs ``work`` on a pool thread and reports it once (``signals``). Subclasses write ``work`` and, where an
    exception is an answer of its own (a read that failed: None), ``failed``."""

    lower_priority = False  # the window paints first (a thread that only ever runs jobs)

    def __init__(self) -> None:
        super().__init__()
        self.signals = WorkerSignals()

    def work(self) -> R:
        raise NotImplementedError

    def failed(self, exc: BaseException) -> R:
        """What to report when ``work`` raised ``exc`` (said why first); by default ``exc`` itself, by ``errored``."""
        raise exc

    def run(self) -> None:
        if self.lower_priority:
            lower_current_thread()
        try:
            try:
                result = self.work()
            except BaseException as exc:  # delivered to the GUI thread, never lost on the worker
                result = self.failed(exc)
        except BaseException as exc:
            emit_from_worker(self.signals.errored, exc)
        else:
            emit_from_worker(self.signals.returned, result)


@dataclass(frozen=True)
class PoolRun:
    """A pool worker's report: its pool, and how many jobs it ran."""

    pool: JobPool
    count: int


class PoolWorker(Worker[PoolRun]):
    """Drains runnable jobs of one pool on a pool thread."""

    lower_priority = True

    def __init__(self, executor: JobExecutor, pool: JobPool, should_continue: Callable[[], bool]) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.executor = executor
        self.pool = pool
        self.should_continue = should_continue

    def work(self) -> PoolRun:
        return PoolRun(self.pool, self.executor.drain(self.pool, self.should_continue))

    def failed(self, exc: BaseException) -> PoolRun:
        log.error("A %s worker stopped on an unexpected error; the job stays in the queue", self.pool, exc_info=exc)
        return PoolRun(self.pool, 0)  # (the runner counts its workers by their reports: one always comes)


class _MaintenanceWorker(Worker[R]):
    """A look at the library on the runner's maintenance thread: the library's server out of reach is said once
    for the outage (the next look comes at its time); anything else is logged (``failure``)."""

    failure = ""

    def __init__(self, queue: JobStore, outage: Outage) -> None:
        super().__init__()
        self.queue = queue
        self.outage = outage

    def failed(self, exc: BaseException) -> R:
        away = self.queue.db.unreachable(exc)
        if away is not None:
            self.outage.failed(away)
        else:
            log.error("%s", self.failure, exc_info=exc)
        return self.nothing()  # (the runner waits for each look's report before the next: one always comes)

    def nothing(self) -> R:
        """The report of a look that failed."""
        raise NotImplementedError


class SweepWorker(_MaintenanceWorker[SweepReport | None]):
    """The recovery sweep; reports its ``SweepReport``, or None if it failed."""

    lower_priority = True
    failure = "The recovery sweep failed; it will run again later"

    def __init__(
        self,
        queue: JobStore,
        session_id: str,
        settings: JobSettings,
        registry: ProcessorRegistry,
        stop: threading.Event,
        outage: Outage,
    ) -> None:
        """``registry``: its hooks are read on the worker (a deferred registry builds then); ``stop``: set when
        the app closes (no further hook round)."""
        super().__init__(queue, outage)
        self.session_id = session_id
        self.settings = settings
        self.registry = registry
        self.stop = stop

    def work(self) -> SweepReport | None:
        hooks = list(self.registry.sweep_hooks)
        return sweep(self.queue, self.session_id, self.settings, hooks=hooks, stop=self.stop)

    def nothing(self) -> SweepReport | None:
        return None


class TakeoverWorker(_MaintenanceWorker[SweepReport | None]):
    """Gives back to the queue the jobs no live session answers for: another machine's whose lease ran out
    (that machine stopped: killed, powered off, cut off from the server), or a session's that ended. Reports
    what it took back (None: nothing, or the look failed)."""

    failure = "Could not look for jobs whose lease ran out"

    def __init__(self, queue: JobStore, session_id: str, outage: Outage) -> None:
        super().__init__(queue, outage)
        self.session_id = session_id

    def work(self) -> SweepReport | None:
        recovered = self.queue.take_back_expired(self.session_id)
        if not (recovered.requeued or recovered.failed):
            return None
        log.warning(
            "Took back %d job(s) whose machine stopped answering for them (their lease ran out)",
            len(recovered.requeued) + len(recovered.failed),
        )
        return SweepReport(requeued_interrupted=recovered.requeued, failed_interrupted=recovered.failed)

    def nothing(self) -> SweepReport | None:
        return None


@dataclass(frozen=True)
class PollResult:
    """A read of job changes: the jobs named that were to be read, and the jobs read (None: the read failed)."""

    named: frozenset[str]
    changed: list[JobRecord] | None


class PollWorker(_MaintenanceWorker[PollResult]):
    """Reads job changes on the maintenance thread: those since a time (``since``), or the jobs a server's
    notifications named (``named``), or both. A read of hundreds of rows (another process's bulk retry, or
    this one's) must not hold the window's event loop."""

    failure = "Could not look for job changes made by other processes"

    def __init__(self, queue: JobStore, since: datetime | None, named: frozenset[str], outage: Outage) -> None:
        super().__init__(queue, outage)
        self.since = since
        self.named = named

    def work(self) -> PollResult:
        changed = self.queue.jobs_named(self.named) if self.named else []
        # page by page: a read that stopped at a page would find the same page again next time (more
        # changes than a page within the look-back: an import, a bulk retry)
        since, after = self.since, ""
        while since is not None and len(changed) < MOST_CHANGES_READ:
            page = self.queue.changed_since(since, CHANGES_PAGE, after)
            changed.extend(page)
            if len(page) < CHANGES_PAGE:
                break
            since, after = page[-1].updated_at, page[-1].id
        return PollResult(self.named, changed)

    def nothing(self) -> PollResult:
        return PollResult(self.named, None)
