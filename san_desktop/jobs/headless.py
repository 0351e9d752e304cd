"""``san jobs run``: the same runner without a window, on a Qt core event loop."""

from __future__ import annotations

import logging
import signal
from types import FrameType

from PySide6.QtCore import QCoreApplication, QTimer

from san_desktop.bootstrap import Backend
from san_desktop.core.settings import JobSettings
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.job_queue import JobQueue
from san_desktop.queue.records import JobEvent

log = logging.getLogger(__name__)


def run_headless(
    backend: Backend,
    registry: ProcessorRegistry,
    settings: JobSettings,
    *,
    until_idle: bool = False,
    wait_retries: bool = False,
    timeout: float | None = None,
    ai_threads: int | None = None,
) -> int:
    """Run jobs until stopped (SIGINT/SIGTERM), until idle (with ``wait_retries``: until no job waits for
    a later retry either), or until ``timeout`` seconds passed. Returns 0, or 124 when the timeout ended
    it while work was still runnable."""
    app = QCoreApplication.instance() or QCoreApplication([])
    queue = JobQueue(backend.db, settings)
    runner = JobRunner(queue, registry, backend.require_session(), settings, ai_threads=ai_threads)
    outcome = {"code": 0}

    def on_idle() -> None:
        # jobs of a pool the user paused wait for its Resume; they do not keep this run going
        if not until_idle or queue.has_runnable(runner.runnable_job_types()):
            return
        if wait_retries and queue.waiting_summary(runner.runnable_job_types()) is not None:
            return  # the poll picks them up when they are due
        log.info("Nothing left to run; stopping")
        app.quit()

    def on_timeout() -> None:
        if queue.has_runnable(runner.runnable_job_types()):
            outcome["code"] = 124
        log.info("Timeout reached; stopping")
        app.quit()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("Signal %s received; stopping", signum)
        app.quit()

    def log_event(event: JobEvent) -> None:
        log.info("Job %s %s: %s -> %s", event.job_id, event.job.job_type, event.old_status, event.new_status)

    runner.idle.connect(on_idle)
    runner.job_changed.connect(log_event)
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    # Python runs signal handlers only between bytecodes: let the interpreter in regularly.
    heartbeat = QTimer()
    heartbeat.start(200)
    heartbeat.timeout.connect(lambda: None)
    if timeout is not None:
        QTimer.singleShot(int(timeout * 1000), on_timeout)
    runner.start()
    try:
        app.exec()
    finally:
        heartbeat.stop()
        runner.shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return outcome["code"]
