"""The Qt part of the job system: two QThreadPools (AI and GitHub), timers, and signals (what runs on the pools'
threads is in ``jobs.workers``).

The database is the queue. The runner never holds a job only in memory: a worker thread claims a job
with one conditional UPDATE only when its pool has a free thread, runs it, records the outcome, and
claims the next. Jobs enqueued in this process wake the runner at once (after their commit); jobs
enqueued by another process (the command line) are found by a poll every couple of seconds.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal, Slot

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.jobs.breaker import BreakerState, BreakerStatus, CircuitBreaker
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.outage import Outage
from san_desktop.jobs.registry import JobProgress, ProcessorRegistry
from san_desktop.jobs.workers import (
    PollResult,
    PollWorker,
    PoolRun,
    PoolWorker,
    SweepWorker,
    TakeoverWorker,
    WorkerSignals,
)
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.recovery.sweep import SweepReport

log = logging.getLogger(__name__)

EXTERNAL_LOOKBACK = timedelta(seconds=10)
READ_AGAIN_MS = 2_000  # after a failed read of other machines' changes, while the server still notifies
# How long a thread may hold the GIL while another waits for it (a tenth of Python's default). Workers hand
# the database's write turn to each other many times a second, and one that got the turn waited for the
# GIL while holding it, a whole default interval at worst; the GUI thread waited as long for its next event.
GIL_SWITCH_INTERVAL = 0.0005
# queue events announced in one pass of the GUI thread's event loop; the rest in the next
EVENTS_PER_SLICE = 100
# Once it took events, the GUI thread looks for more after this long instead of being woken by each: a
# drain announces thousands a second, and every cross-thread wake-up and pass of the loop took the GIL from
# the workers. A first event after a quiet spell still wakes it at once.
INBOX_LOOK_AGAIN_MS = 5
# A stop waits this long (all the pools together) for running jobs to give themselves back; jobs cut short by
# the stop hooks (a slow AI server's call) return within it, and those still running are given back for them.
STOP_WAIT_MS = 3_000
# another machine's job whose lease ran out is looked for this often within a lease (``_on_takeover_timer_timeout``)
TAKEOVER_LOOKS_PER_LEASE = 4


@dataclass(frozen=True)
class BreakerChange:
    pool: JobPool
    status: BreakerStatus


class PoolState(StrEnum):
    RUNNING = "running"
    IDLE = "idle"
    PAUSED_BY_USER = "paused"  # Pause in the monitor or `san jobs pause`; remembered in the settings
    # the AI server kept failing (a cooldown, then a probe), or rejected the key (until the user acts)
    PAUSED_BY_BREAKER = "paused by failures"
    TESTING = "testing"  # the breaker lets one probe job through


@dataclass(frozen=True)
class PoolStatus:
    pool: JobPool
    state: PoolState
    running: int  # jobs running now
    threads: int
    seconds_left: float | None = None  # PAUSED_BY_BREAKER: until the probe (None: held until the user acts)
    failures: int = 0  # PAUSED_BY_BREAKER: failures in a row that paused it
    reason: str | None = None  # PAUSED_BY_BREAKER and held: what the user must change, a sentence
    last_error: str | None = None  # PAUSED_BY_BREAKER: the latest of those failures, its first line

    def describe(self) -> str:
        if self.state is PoolState.PAUSED_BY_BREAKER and self.reason is not None:
            return f"paused. {self.reason}"
        if self.state is PoolState.PAUSED_BY_BREAKER:
            return f"paused after {self.failures} failures in a row; trying again in {self.seconds_left or 0:.0f} s"
        if self.state is PoolState.RUNNING:
            return f"running ({self.running} of {self.threads})"
        if self.state is PoolState.PAUSED_BY_USER:
            return "paused (Resume to run jobs again)"
        return {PoolState.IDLE: "idle", PoolState.TESTING: "testing the AI server with one job"}[self.state]


class JobRunner(QObject):
    """Runs jobs on the AI and GitHub pools and announces every status change.

    Signals:
        job_changed(object): a ``JobEvent`` for every status change (enqueue, claim, finish, retry,
            cancel, recovery), emitted on the runner's (GUI) thread whatever thread made the change.
        breaker_changed(object): a ``BreakerChange`` when a pool pauses or resumes.
        sweep_finished(object): the ``SweepReport`` of each recovery sweep, and of each look for jobs whose
            lease ran out that took some back.
        stalled(list): ids of jobs running far past their lease in this session.
        idle(): no worker is running and none could be started (nothing to do, or a paused pool);
            repeats on every poll while it stays so.
        job_progress(object): a ``JobProgress`` when a multi-step job starts a step.
        pools_changed(): a pool was paused or resumed, by the user or the breaker (``pool_status``; whether
            it runs jobs changes too often for a signal: read it when needed).
    """

    job_changed = Signal(object)
    job_progress = Signal(object)
    breaker_changed = Signal(object)
    sweep_finished = Signal(object)
    stalled = Signal(list)
    idle = Signal()
    pools_changed = Signal()
    # Announcements made on worker threads cross to the runner's thread through these, so that every
    # public signal is emitted on the GUI thread and reaches its receivers directly.
    _queue_events = Signal()
    _others_changed = Signal(object)  # a server's notification: the ids of jobs written (None: unknown)
    _breaker_event = Signal(object)
    _progress_event = Signal(object)

    def __init__(
        self,
        queue: JobStore,
        registry: ProcessorRegistry,
        session_id: str,
        settings: JobSettings,
        parent: QObject | None = None,
        *,
        ai_threads: int | None = None,
    ) -> None:
        """``ai_threads``: the AI pool's size when it is not ``settings.ai_pool_size`` (``Settings.ai_threads``
        says how many the configured provider wants)."""
        super().__init__(parent)
        if sys.getswitchinterval() > GIL_SWITCH_INTERVAL:
            sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        self.queue = queue
        self.registry = registry
        self.session_id = session_id
        self.settings = settings
        self.outage = Outage()  # the library's server out of reach: every part of the runner waits it out
        self.breakers = {
            JobPool.AI: CircuitBreaker(
                settings.breaker_failure_threshold,
                settings.breaker_cooldown_seconds,
                settings.breaker_max_cooldown_seconds,
                on_change=lambda status: self._on_breaker_change(JobPool.AI, status),
            )
        }
        self.executor = JobExecutor(
            queue, registry, session_id, self.breakers, on_progress=self._progress_event.emit, outage=self.outage
        )
        self.pools = {JobPool.AI: QThreadPool(self), JobPool.GITHUB: QThreadPool(self)}
        self.pools[JobPool.AI].setMaxThreadCount(ai_threads or settings.ai_pool_size)
        self.pools[JobPool.GITHUB].setMaxThreadCount(settings.github_pool_size)
        self.pools[JobPool.AI].setObjectName("ai-pool")
        self.pools[JobPool.GITHUB].setObjectName("github-pool")
        self._maintenance = QThreadPool(self)
        self._maintenance.setMaxThreadCount(1)
        self._in_flight = {pool: 0 for pool in self.pools}
        self._worker_signals: set[WorkerSignals] = set()  # kept alive until each worker reported
        self._sweeping = False
        self._sweep_signals: WorkerSignals | None = None
        self._takeover_signals: WorkerSignals | None = None  # a look for jobs whose lease ran out, under way
        self._poll_signals: WorkerSignals | None = None  # a read of other processes' changes under way
        # jobs a server's notifications named, to read; and whether to read by time (a notification named no
        # job, the notifications were interrupted, or a read failed)
        self._told: set[str] = set()
        self._told_unknown = False
        self._seen_until: datetime = queue.clock()  # newest job change this runner has announced
        self._seen: dict[tuple[str, datetime], None] = {}  # (job, updated_at) announced lately
        # queue events from any thread wait here for the runner's thread; one wake-up per batch, none while
        # it will look again by itself (``_looking``)
        self._inbox: list[JobEvent] = []
        self._inbox_lock = threading.Lock()
        self._looking = False
        self._started = False
        self._stopped = False
        self._stopped_cleanly: bool | None = None
        self.not_given_back: frozenset[str] = frozenset()  # after ``shutdown``: jobs left running (the server away)

        self._poll_timer = QTimer(self)
        self._poll_timer.setInterval(int(settings.poll_interval_seconds * 1000))
        self._poll_timer.timeout.connect(self._on_poll_timer_timeout)
        self._sweep_timer = QTimer(self)
        self._sweep_timer.setInterval(int(settings.sweep_interval_seconds * 1000))
        self._sweep_timer.timeout.connect(self._on_sweep_timer_timeout)
        self._look_timer = QTimer(self)
        self._look_timer.setSingleShot(True)
        self._look_timer.timeout.connect(self._on_queue_events_arrived)
        self._takeover_timer = QTimer(self)
        self._takeover_timer.setInterval(self._takeover_interval_ms(settings))
        self._takeover_timer.timeout.connect(self._on_takeover_timer_timeout)
        # while the library's server is away: dispatch again once the outage's wait is over
        self._outage_timer = QTimer(self)
        self._outage_timer.setSingleShot(True)
        self._outage_timer.timeout.connect(self.dispatch)
        self._queue_events.connect(self._on_queue_events_arrived)
        self._breaker_event.connect(self._on_breaker_event_arrived)
        self._progress_event.connect(self._on_progress_event_arrived)
        self._others_changed.connect(self._on_others_changed)
        queue.add_listener(self._on_queue_event)
        # a server's library names the jobs other machines queued or cancelled as they commit
        self._tell_others = self._others_changed.emit  # (one bound method: the same to unwatch)
        self._told_of_others = queue.watch_others(self._tell_others)

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._started

    def start(self) -> None:
        """Run the recovery sweep first (off this thread); jobs start once it is done."""
        if self._started or self._sweeping or self._stopped:
            return
        self._run_sweep()

    def run_sweep_now(self) -> None:
        if not self._sweeping and not self._stopped:
            self._run_sweep()

    def _run_sweep(self) -> None:
        self._sweeping = True
        worker = SweepWorker(
            self.queue, self.session_id, self.settings, self.registry, self.executor.shutdown_event, self.outage
        )
        worker.signals.returned.connect(self._on_sweep_returned)
        self._sweep_signals = worker.signals  # alive until its report arrived
        self._maintenance.start(worker)

    @Slot(object)
    def _on_sweep_returned(self, report: SweepReport | None) -> None:
        self._sweeping = False
        if self._stopped:
            return
        if not self._started:
            self._started = True
            self._poll_timer.start()
            self._sweep_timer.start()
            self._takeover_timer.start()
        if self._told or self._told_unknown:
            QTimer.singleShot(0, self, self._read_told)  # told of changes while the sweep ran
        if report is not None:
            self.sweep_finished.emit(report)
            if report.stalled:
                self.stalled.emit(list(report.stalled))
        self.dispatch()

    @property
    def stopped_cleanly(self) -> bool | None:
        """After ``shutdown``: whether every thread of the runner had ended (False: one still runs, and a
        process that waited for it at exit would not end). None before."""
        return self._stopped_cleanly

    def shutdown(self, wait_ms: int = STOP_WAIT_MS) -> bool:
        """Stop claiming, ask running jobs to stop (they go back to the queue), cut short what they wait on
        (the registry's stop hooks: a slow AI server's call), and wait for the pools, ``wait_ms`` at most. Jobs
        still running then are given back to the queue for them (what they write later is dropped). Returns
        False if some work was still running after ``wait_ms``: its thread cannot be stopped, and the process
        must end without waiting for it (``stopped_cleanly``)."""
        if self._stopped:
            return self._stopped_cleanly is not False
        self._stopped = True
        for timer in (self._poll_timer, self._sweep_timer, self._look_timer, self._takeover_timer, self._outage_timer):
            timer.stop()
        self.queue.remove_listener(self._on_queue_event)
        if self._told_of_others:
            self.queue.unwatch_others(self._tell_others)
        self.executor.shut_down()
        self.registry.stop()
        deadline = time.monotonic() + wait_ms / 1000  # for all the pools together
        finished = all(
            pool.waitForDone(max(0, int((deadline - time.monotonic()) * 1000)))
            for pool in (*self.pools.values(), self._maintenance)
        )
        left = self.executor.give_back_held()
        self.not_given_back = frozenset(left)
        if not finished:
            log.warning(
                "Some work was still running %.0f s after the stop; its jobs were given back to the queue%s",
                wait_ms / 1000,
                f" except {', '.join(sorted(left))} (recovered at the next start)" if left else "",
            )
        elif left:
            log.warning("Job(s) %s could not be given back to the queue; the next start recovers them", left)
        self._stopped_cleanly = finished
        return finished

    # --- scheduling ---------------------------------------------------------------------------

    def dispatch(self) -> None:
        """Start a worker for every free thread of each pool that has something it could run (while the
        library's server is away, once the outage's wait is over)."""
        if not self._started or self._stopped:
            return
        wait = self.outage.seconds_to_wait()
        if wait > 0:
            if not self._outage_timer.isActive():
                self._outage_timer.start(int(wait * 1000) + 1)
            if not any(self._in_flight.values()) and not self._sweeping:
                self.idle.emit()
            return
        for pool, threads in self.pools.items():
            if not self.registry.job_types_of(pool) or self.settings.paused(pool):
                continue
            breaker = self.breakers.get(pool)
            if breaker is not None and breaker.paused():
                continue
            while self._in_flight[pool] < threads.maxThreadCount():
                worker = PoolWorker(self.executor, pool, self._may_go_on(pool))
                worker.signals.returned.connect(self._on_pool_worker_returned)
                self._in_flight[pool] += 1
                self._worker_signals.add(worker.signals)
                threads.start(worker)
        if not any(self._in_flight.values()) and not self._sweeping:
            self.idle.emit()

    def _may_go_on(self, pool: JobPool) -> Callable[[], bool]:
        """Asked by a worker before each next job: a pool paused meanwhile stops after the current one."""
        return lambda: not self.settings.paused(pool)

    def breaker_status(self, pool: JobPool = JobPool.AI) -> BreakerStatus | None:
        breaker = self.breakers.get(pool)
        return breaker.status() if breaker else None

    def pool_status(self, pool: JobPool) -> PoolStatus:
        """What ``pool`` does now (read from memory: cheap enough for a one-second refresh)."""
        running, threads = self.executor.running_count(pool), self.pools[pool].maxThreadCount()
        breaker = self.breaker_status(pool)
        if breaker is not None and breaker.state is BreakerState.OPEN:
            left = self.breakers[pool].seconds_until_probe()
            return PoolStatus(
                pool,
                PoolState.PAUSED_BY_BREAKER,
                running,
                threads,
                left,
                breaker.consecutive_failures,
                breaker.held,
                breaker.last_error,
            )
        if self.settings.paused(pool):
            return PoolStatus(pool, PoolState.PAUSED_BY_USER, running, threads)
        if breaker is not None and breaker.state is BreakerState.HALF_OPEN:
            return PoolStatus(pool, PoolState.TESTING, running, threads)
        return PoolStatus(pool, PoolState.RUNNING if running else PoolState.IDLE, running, threads)

    def runnable_job_types(self, *, without: Collection[JobPool] = (), only: JobPool | None = None) -> list[JobType]:
        """The job types this runner would start: those of pools the user has not paused (nor ``without``;
        with ``only``, of that pool alone)."""
        return [
            job_type
            for pool in self.pools
            if not self.settings.paused(pool) and pool not in without and only in (None, pool)
            for job_type in self.registry.job_types_of(pool)
        ]

    # --- user actions -------------------------------------------------------------------------

    def try_now(self, pool: JobPool = JobPool.AI) -> None:
        """Let a pool the breaker paused run again at once."""
        breaker = self.breakers.get(pool)
        if breaker is not None:
            breaker.reset()
        self.dispatch()

    def apply_settings(self, settings: JobSettings, *, ai_changed: bool = False, ai_threads: int | None = None) -> None:
        """New job settings take effect at once; when the AI settings changed, the AI pool's breaker
        closes and AI jobs waiting for a retry run now (what made them fail may be fixed)."""
        self.settings = settings
        self.queue.settings = settings
        self.pools[JobPool.AI].setMaxThreadCount(ai_threads or settings.ai_pool_size)
        self.pools[JobPool.GITHUB].setMaxThreadCount(settings.github_pool_size)
        self._poll_timer.setInterval(int(settings.poll_interval_seconds * 1000))
        self._sweep_timer.setInterval(int(settings.sweep_interval_seconds * 1000))
        self._takeover_timer.setInterval(self._takeover_interval_ms(settings))
        self.pools_changed.emit()  # a pause or resume
        if ai_changed:
            self.queue.wake(self.registry.job_types_of(JobPool.AI))
            self.try_now(JobPool.AI)
        else:
            self.dispatch()

    # --- slots --------------------------------------------------------------------------------

    def _on_queue_event(self, event: JobEvent) -> None:
        # any thread: hand the event to the runner's own thread; a wake-up is only sent when the runner's
        # thread is not going to look by itself (two workers made 2 cross-thread calls per job)
        with self._inbox_lock:
            self._inbox.append(event)
            if self._looking:
                return
            self._looking = True
        self._queue_events.emit()

    @Slot()
    def _on_queue_events_arrived(self) -> None:
        with self._inbox_lock:
            events, self._inbox = self._inbox[:EVENTS_PER_SLICE], self._inbox[EVENTS_PER_SLICE:]
            more = bool(self._inbox)
            if not events:
                self._looking = False  # quiet again: the next event wakes this thread
                return
        if self._stopped:
            return
        # the rest after whatever else waits (painting, input); and a look for more a little later
        self._look_timer.start(0 if more else INBOX_LOOK_AGAIN_MS)
        look_for_work = False
        for event in events:
            if event.external and (event.job.id, event.job.updated_at) in self._seen:
                continue  # announced already, by this process's own event
            self._remember_seen(event.job)
            if event.new_status is JobStatus.CANCELLED:
                self.executor.request_cancel(event.job_id)  # a running attempt stops cooperatively
            self.job_changed.emit(event)
            look_for_work = look_for_work or event.old_status is None or event.new_status is JobStatus.PENDING
        if look_for_work:
            self.dispatch()

    def _remember_seen(self, job: JobRecord) -> None:
        self._seen_until = max(self._seen_until, job.updated_at)
        self._seen[(job.id, job.updated_at)] = None

    def _on_breaker_change(self, pool: JobPool, status: BreakerStatus) -> None:
        log.warning("%s pool: %s", pool.value, status.describe())
        self._breaker_event.emit(BreakerChange(pool, status))

    @Slot(object)
    def _on_breaker_event_arrived(self, change: BreakerChange) -> None:
        if not self._stopped:
            self.breaker_changed.emit(change)
            self.pools_changed.emit()

    @Slot(object)
    def _on_progress_event_arrived(self, progress: JobProgress) -> None:
        if not self._stopped:
            self.job_progress.emit(progress)

    @Slot()
    def _on_poll_timer_timeout(self) -> None:
        if self.outage.seconds_to_wait():
            self.dispatch()  # the server is away: it tries again once the outage's wait is over
            return
        if self._told_unknown:
            self._announce_external_changes(told=True)  # a read failed
        else:
            # (a server tells what to act on, queued and cancelled jobs, and new cards; the rest of other
            # machines' changes, their completions, is read when this runner's workers are idle)
            self._announce_external_changes()
        self.dispatch()

    @Slot(object)
    def _on_others_changed(self, ids: frozenset[str] | None) -> None:
        """A server's library named jobs another machine or process queued or cancelled, or told of their
        results (None: read by time), as they committed: read them, announce what this runner has not, and run
        what was queued. (What this process wrote is never told back: it announced it itself.)"""
        if ids is None or "" in ids:
            self._told_unknown = True  # which is unknown: read by time
        self._told |= (ids or frozenset()) - {""}
        self._read_told()

    @Slot()
    def _read_told(self) -> None:
        if self._started and not self._stopped:
            self._announce_external_changes(told=True)
            self.dispatch()

    def _announce_external_changes(self, *, told: bool = False) -> None:
        """Announce job changes made by another process (``san jobs retry``, ``san scrap add``...), so
        views stay live. Looking for them, only while this runner's own workers are idle: their changes are
        announced already, and a drain would make this query return them again. Told of them (``told``: a
        server's notifications named them; another machine's workers drain the same queue), at once, whatever
        this runner does. The read runs on the maintenance thread; its result arrives in ``_on_poll_returned``,
        and what was told meanwhile is read after it."""
        if self._sweeping or self._poll_signals is not None:
            return
        if told:
            named, by_time = frozenset(self._told), self._told_unknown
            self._told, self._told_unknown = set(), False
            if not named and not by_time:
                return
        elif any(self._in_flight.values()):
            return
        else:
            named, by_time = frozenset(), True
        # Reading by time, look back a little: another process stamps updated_at before it commits, so its
        # change can become visible after one of ours with a later stamp (a server's notifications name the
        # jobs as they commit instead). Pairs already announced are skipped.
        worker = PollWorker(self.queue, self._seen_until - EXTERNAL_LOOKBACK if by_time else None, named, self.outage)
        worker.signals.returned.connect(self._on_poll_returned)
        self._poll_signals = worker.signals  # alive until its result arrived
        self._maintenance.start(worker)

    @Slot(object)
    def _on_poll_returned(self, result: PollResult) -> None:
        """The changes read go the way this process's own do (``_on_queue_events_arrived``, a slice at a
        time), unless announced already or on their way (this process's bulk retry, read before its
        events arrived)."""
        self._poll_signals = None
        named, changed = result.named, result.changed
        if changed is None:
            # read again, by time and what was named: in a while if notifications still come (the server is
            # there: the failure passed), otherwise when they come again (a reconnect says so) or at the next
            # poll, not at once (the server may be away)
            self._told |= named
            self._told_unknown = True
            if not self._stopped and self._told_of_others and self.queue.others_notify:
                QTimer.singleShot(READ_AGAIN_MS, self, self._read_told)
            return
        if self._stopped:
            return
        if self._told or self._told_unknown:
            QTimer.singleShot(0, self, self._read_told)  # told of more while this read was under way
        with self._inbox_lock:
            waiting = {(event.job.id, event.job.updated_at) for event in self._inbox}
            news = [
                JobEvent(job, None, external=True)
                for job in changed
                if (job.id, job.updated_at) not in self._seen and (job.id, job.updated_at) not in waiting
            ]
            self._inbox.extend(news)
            wake = bool(news) and not self._looking  # (otherwise this thread looks by itself)
            self._looking = self._looking or wake
        horizon = self._seen_until - 2 * EXTERNAL_LOOKBACK
        self._seen = {pair: None for pair in self._seen if pair[1] >= horizon}
        if wake:
            self._queue_events.emit()

    @Slot()
    def _on_sweep_timer_timeout(self) -> None:
        self.run_sweep_now()

    @staticmethod
    def _takeover_interval_ms(settings: JobSettings) -> int:
        return max(1, int(settings.lease_seconds * 1000 / TAKEOVER_LOOKS_PER_LEASE))

    @Slot()
    def _on_takeover_timer_timeout(self) -> None:
        """Look for jobs no live session answers for (another machine stopped renewing their leases), on the
        maintenance thread; found, they go back to the queue and this runner may run them."""
        if self._stopped or self._sweeping or self._takeover_signals is not None or self.outage.seconds_to_wait():
            return
        worker = TakeoverWorker(self.queue, self.session_id, self.outage)
        worker.signals.returned.connect(self._on_takeover_returned)
        self._takeover_signals = worker.signals  # alive until its report arrived
        self._maintenance.start(worker)

    @Slot(object)
    def _on_takeover_returned(self, report: SweepReport | None) -> None:
        self._takeover_signals = None
        if self._stopped or report is None:
            return
        self.sweep_finished.emit(report)  # (the jobs' own events start them)

    @Slot(object)
    def _on_pool_worker_returned(self, run: PoolRun) -> None:
        self._in_flight[run.pool] -= 1
        self._worker_signals.discard(self.sender())
        if self._stopped:
            return
        if run.count > 0:
            self.dispatch()  # it stopped because it ran out of work or the breaker opened: look again
        elif not any(self._in_flight.values()) and not self._sweeping:
            self.idle.emit()
