"""``san jobs run``: the same runner without a window, on a Qt core event loop.

A thread cannot be stopped, so a job that never returns would keep the process alive for ever (Qt's pools
wait for their threads when they are destroyed). When the run stops (timeout, signal, a server that stayed
away) the running jobs get ``STOP_GRACE_SECONDS`` to finish; a job still running then is given back to the
queue as interrupted (what it writes later is dropped) and the process ends at once. A job that cannot be
given back (the server away) is taken over by another machine once its lease runs out, and given back by the
next start here. And should a job hold the interpreter itself (a C call that lets no other thread run, not
even the timer's), a watchdog outside the interpreter ends the process ``HARD_STOP_SECONDS`` later, with exit
code 1 and every thread's stack on stderr; the next start's recovery sweep gives that job back.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
import sys
from dataclasses import dataclass
from types import FrameType

from PySide6.QtCore import QCoreApplication, QTimer

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import POOL_NAMES, JobPool
from san_desktop.core.errors import DatabaseUnreachableError
from san_desktop.core.logging_setup import exit_at_once
from san_desktop.core.settings import JobSettings
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner, PoolState, PoolStatus
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 5.0
HARD_STOP_SECONDS = 10.0  # after the grace: the watchdog's margin
TIMED_OUT = 124  # the timeout stopped a run that still had work
POOL_PAUSED = 75  # EX_TEMPFAIL: --until-idle stopped while failures (or a rejected key) paused a pool
DATABASE_AWAY = 69  # EX_UNAVAILABLE: the library's server stayed out of reach past the give-up bound
GIVE_UP_SECONDS = 300.0  # a run gives up on a server away this long (``san jobs run --give-up-after``)


@dataclass(frozen=True)
class HeadlessOutcome:
    code: int  # 0, TIMED_OUT, POOL_PAUSED or DATABASE_AWAY
    paused: tuple[PoolStatus, ...] = ()  # POOL_PAUSED: the pools that failures or a rejected key paused
    reason: str = ""  # why it stopped, a sentence for the terminal ("Nothing left to run.")


def run_headless(
    backend: Backend,
    registry: ProcessorRegistry,
    settings: JobSettings,
    *,
    until_idle: bool = False,
    wait_retries: bool = False,
    timeout: float | None = None,
    ai_threads: int | None = None,
    queue: JobStore | None = None,
    give_up: float = GIVE_UP_SECONDS,
) -> HeadlessOutcome:
    """Run jobs until stopped (SIGINT/SIGTERM), until idle (with ``wait_retries``: until no job waits for
    a later retry or a paused pool's next try either), or until ``timeout`` seconds passed. ``queue``: the
    application's store, so that jobs its services enqueue wake this runner (a store of its own otherwise).
    A library's server that goes away is waited for (the runner goes on when it answers again), ``give_up``
    seconds at most: then the run stops (``DATABASE_AWAY``), giving back the jobs it held if it can."""
    app = QCoreApplication.instance() or QCoreApplication([])
    queue = queue or JobStore(backend.db, settings)
    runner = JobRunner(queue, registry, backend.require_session(), settings, ai_threads=ai_threads)
    outcome = {"code": 0}
    reason = {"text": ""}
    paused: list[PoolStatus] = []

    def stop(why: str) -> None:
        log.info("%s; stopping", why)
        reason["text"] = f"{why}."
        app.quit()

    def on_idle() -> None:
        # jobs of a pool the user paused wait for its Resume; they do not keep this run going
        if not until_idle or runner.outage.down:
            return  # (while the server is away, nothing is known of what is left: the run waits for it)
        try:
            idle_now(queue)
        except Exception as exc:
            away = backend.db.unreachable(exc)
            if away is None:
                raise
            runner.outage.failed(away)  # the server went away just now: waited for as any outage

    def idle_now(queue: JobStore) -> None:
        held = [status for pool in runner.pools if (status := _paused_by_breaker(runner, pool)) is not None]
        if queue.has_runnable(runner.runnable_job_types(without=[status.pool for status in held])):
            return
        waiting = [status for status in held if queue.has_runnable(runner.runnable_job_types(only=status.pool))]
        if wait_retries:
            if queue.waiting_summary(runner.runnable_job_types()) is not None:
                return  # the poll picks them up when they are due
            if any(status.seconds_left is not None for status in waiting):
                return  # so does it when the pause ends; a rejected key, though, only the user can fix
        if waiting:
            paused.extend(waiting)
            outcome["code"] = POOL_PAUSED
            stop(f"Nothing can run while {' and '.join(_news(status) for status in waiting)}")
        else:
            stop("Nothing left to run")

    def on_timeout() -> None:
        try:
            had_work = runner.outage.down or bool(runner.executor.running_job_ids())
            had_work = had_work or queue.has_runnable(runner.runnable_job_types())
        except Exception as exc:
            if backend.db.unreachable(exc) is None:
                raise
            had_work = True  # (what is left is unknown with the server away: not "done")
        if had_work:
            outcome["code"] = TIMED_OUT
        stop("Timeout reached")

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop(f"Signal {signum} received")

    def on_heartbeat() -> None:
        if runner.outage.seconds_down() > give_up and outcome["code"] != DATABASE_AWAY:
            outcome["code"] = DATABASE_AWAY
            stop(_gave_up(runner.outage.reason, give_up))

    def log_event(event: JobEvent) -> None:
        log.info("Job %s %s: %s -> %s", event.job_id, event.job.job_type, event.old_status, event.new_status)

    runner.idle.connect(on_idle)
    runner.job_changed.connect(log_event)
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    # Python runs signal handlers only between bytecodes: let the interpreter in regularly.
    heartbeat = QTimer()
    heartbeat.start(200)
    heartbeat.timeout.connect(on_heartbeat)
    if timeout is not None:
        QTimer.singleShot(int(timeout * 1000), on_timeout)
        if sys.__stderr__ is not None:
            faulthandler.dump_traceback_later(
                timeout + STOP_GRACE_SECONDS + HARD_STOP_SECONDS, exit=True, file=sys.__stderr__
            )
    runner.start()
    try:
        app.exec()
    finally:
        heartbeat.stop()
        finished = runner.shutdown(wait_ms=int(STOP_GRACE_SECONDS * 1000))
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if runner.not_given_back:
            reason["text"] += " " + _left_running(runner.not_given_back, settings)
        if not finished:
            running = sorted(runner.executor.running_job_ids())
            _abandon(running, runner.not_given_back, outcome["code"], reason["text"])
        faulthandler.cancel_dump_traceback_later()
    return HeadlessOutcome(outcome["code"], tuple(paused), reason["text"])


def _gave_up(error: DatabaseUnreachableError | None, seconds: float) -> str:
    """Why the run stopped, in one sentence (without its full stop: ``stop`` adds it)."""
    where = f"the database {error.where}" if error is not None else "the library's database"
    cause = f" ({error.cause})" if error is not None and error.cause else ""
    return f"Gave up: {where} could not be reached for {seconds:g} s{cause}"


def _left_running(job_ids: frozenset[str], settings: JobSettings) -> str:
    count = len(job_ids)
    jobs, them = ("1 job", "it") if count == 1 else (f"{count} jobs", "them")
    return (
        f"{jobs} it held could not be given back to the queue: another machine takes {them} over once "
        f"{'its lease runs' if count == 1 else 'their leases run'} out ({settings.lease_seconds:g} s), and "
        f"`san jobs run` here gives {them} back when it starts."
    )


def _paused_by_breaker(runner: JobRunner, pool: JobPool) -> PoolStatus | None:
    status = runner.pool_status(pool)
    return status if status.state is PoolState.PAUSED_BY_BREAKER else None


def _news(status: PoolStatus) -> str:
    return f"the {POOL_NAMES[status.pool]} pool is {status.describe()}"


def _abandon(job_ids: list[str], not_given_back: frozenset[str], code: int, reason: str = "") -> None:
    """End the process now: a running job's thread cannot be stopped, and would keep it alive."""
    count = len(job_ids)
    back = count - len(not_given_back.intersection(job_ids))
    fate = "given back to the queue" if back == count else f"{back} of them given back to the queue, the rest later"
    log.warning(
        "%s still running %g s after the stop (%s); ending the process (%s)",
        "1 job" if count == 1 else f"{count} jobs",
        STOP_GRACE_SECONDS,
        ", ".join(job_ids),
        fate,
    )
    if reason and code == DATABASE_AWAY:
        print(reason, file=sys.stderr)  # (the caller never gets to say it)
    exit_at_once(code)
