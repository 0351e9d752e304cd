"""A runner process on a library on PostgreSQL with a no-op processor, for the drain benchmark:

    python -m bench.pg_worker DATA_DIR      ($SAN_DATABASE_URL names the database)

Prints "ready" once the library's notifications are listened to, then drains what is queued (waking on the
server's notifications) until it is terminated."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from san_desktop.bootstrap import Backend, start_backend
from san_desktop.core.enums import JobType
from san_desktop.core.settings import JobSettings
from san_desktop.jobs.headless import run_headless
from san_desktop.jobs.registry import JobContext, ProcessorRegistry


def _no_op(_context: JobContext) -> None:
    return None


def _say_ready_once_listening(backend: Backend, limit: float = 60) -> None:
    """ "ready" once the backend's connection listens (``notified``; at once where a backend has no such
    flag), so that the drain's clock starts when every worker can hear of new jobs."""

    def wait() -> None:
        deadline = time.monotonic() + limit
        while not getattr(backend.db.backend, "notified", True) and time.monotonic() < deadline:
            time.sleep(0.005)
        print("ready", flush=True)

    threading.Thread(target=wait, name="bench-ready", daemon=True).start()


def main(argv: list[str]) -> int:
    backend = start_backend(Path(argv[1]), kind="headless", log_to_stderr=False)
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, _no_op)
    _say_ready_once_listening(backend)
    try:
        return run_headless(backend, registry, JobSettings(), until_idle=False, timeout=600).code
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
