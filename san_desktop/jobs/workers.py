"""The job runner's workers: what runs on its pools' threads (a pool's jobs, the recovery sweep, the look for
jobs whose lease ran out, the read of other processes' job changes), each with the signals ``QObject`` that
carries its report back to the runner's (GUI) thread. Part of the runner: only it starts them."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Signal

from san_desktop.core.enums import JobPool
from san_desktop.core.settings import JobSettings
from san_desktop.core.thread_priority import lower_current_thread
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.outage import Outage
from san_desktop.jobs.recovery import SweepReport, sweep
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore

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


class PoolWorkerSignals(QObject):
    """Made in the worker's ``__init__`` on the GUI thread, so receivers run on the GUI thread.

    Signals:
        finished(str, int): pool name and how many jobs the worker ran.
    """

    finished = Signal(str, int)


class PoolWorker(QRunnable):
    """Drains runnable jobs of one pool on a pool thread."""

    def __init__(self, executor: JobExecutor, pool: JobPool, should_continue: Callable[[], bool]) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.executor = executor
        self.pool = pool
        self.should_continue = should_continue
        self.signals = PoolWorkerSignals()

    def run(self) -> None:
        lower_current_thread()  # the window paints first (a pool's threads only ever run jobs)
        count = 0
        try:
            count = self.executor.drain(self.pool, self.should_continue)
        except Exception:
            log.exception("A %s worker stopped on an unexpected error; the job stays in the queue", self.pool)
        finally:
            emit_from_worker(self.signals.finished, self.pool.value, count)


class SweepSignals(QObject):
    """Signals:
    done(object): the SweepReport, or None if the sweep failed.
    """

    done = Signal(object)


class SweepWorker(QRunnable):
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
        super().__init__()
        self.queue = queue
        self.session_id = session_id
        self.settings = settings
        self.registry = registry
        self.stop = stop
        self.outage = outage
        self.signals = SweepSignals()

    def run(self) -> None:
        lower_current_thread()
        report: SweepReport | None = None
        try:
            hooks = list(self.registry.sweep_hooks)
            report = sweep(self.queue, self.session_id, self.settings, hooks=hooks, stop=self.stop)
        except Exception as exc:
            away = self.queue.db.unreachable(exc)
            if away is not None:
                self.outage.failed(away)  # (said once for the outage; the sweep runs again at its next time)
            else:
                log.exception("The recovery sweep failed; it will run again later")
        finally:
            emit_from_worker(self.signals.done, report)


class TakeoverWorker(QRunnable):
    """Gives back to the queue the jobs no live session answers for: another machine's whose lease ran out
    (that machine stopped: killed, powered off, cut off from the server), or a session's that ended."""

    def __init__(self, queue: JobStore, session_id: str, outage: Outage) -> None:
        super().__init__()
        self.queue = queue
        self.session_id = session_id
        self.outage = outage
        self.signals = SweepSignals()

    def run(self) -> None:
        report: SweepReport | None = None
        try:
            recovered = self.queue.take_back_expired(self.session_id)
            if recovered.requeued or recovered.failed:
                log.warning(
                    "Took back %d job(s) whose machine stopped answering for them (their lease ran out)",
                    len(recovered.requeued) + len(recovered.failed),
                )
                report = SweepReport(requeued_interrupted=recovered.requeued, failed_interrupted=recovered.failed)
        except Exception as exc:
            away = self.queue.db.unreachable(exc)
            if away is not None:
                self.outage.failed(away)
            else:
                log.exception("Could not look for jobs whose lease ran out")
        finally:
            emit_from_worker(self.signals.done, report)


class PollSignals(QObject):
    """Signals:
    done(object, object): the jobs named that were to be read (a frozenset of ids), and the jobs read (None if
    the read failed).
    """

    done = Signal(object, object)


class PollWorker(QRunnable):
    """Reads job changes on the maintenance thread: those since a time (``since``), or the jobs a server's
    notifications named (``named``), or both. A read of hundreds of rows (another process's bulk retry, or
    this one's) must not hold the window's event loop."""

    def __init__(self, queue: JobStore, since: datetime | None, named: frozenset[str], outage: Outage) -> None:
        super().__init__()
        self.queue = queue
        self.since = since
        self.named = named
        self.outage = outage
        self.signals = PollSignals()

    def run(self) -> None:
        changed: list[JobRecord] | None = None
        try:
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
        except Exception as exc:
            changed = None
            away = self.queue.db.unreachable(exc)
            if away is not None:
                self.outage.failed(away)
            else:
                log.exception("Could not look for job changes made by other processes")
        finally:
            emit_from_worker(self.signals.done, self.named, changed)
