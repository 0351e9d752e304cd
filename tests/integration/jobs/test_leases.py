"""Running jobs renew their leases with a heartbeat: a job longer than its lease stays its machine's while that
machine lives, and a machine that is killed has its job taken over by another within about a lease."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import AttemptOutcome, JobPool, JobStatus, JobType
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.database import Database, open_server_database
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings
from tests.support.processes import child_env

LEASE = 2.0


def _lease_of(queue: JobStore, job_id: str) -> datetime:
    lease = queue.get(job_id).lease_until
    assert lease is not None
    return lease


def test_a_job_longer_than_its_lease_keeps_it_while_it_runs(qtbot: QtBot, backend: Backend) -> None:
    queue = JobStore(backend.db, fast_settings(lease_seconds=1.0))
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    running, finish = threading.Event(), threading.Event()

    def long_job(_context: JobContext) -> None:
        running.set()
        finish.wait(30)

    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, long_job)
    executor = JobExecutor(queue, registry, backend.require_session(), {})
    drain = threading.Thread(target=executor.drain, args=(JobPool.AI,))
    drain.start()
    try:
        assert running.wait(10)
        first = _lease_of(queue, job.id)
        # three leases later it is still the job's, renewed (nothing else writes it)
        qtbot.waitUntil(lambda: (_lease_of(queue, job.id) - first).total_seconds() > 3.0, timeout=10_000)
        other = start_session(backend.db, "headless")  # whoever looks for jobs whose lease ran out finds none
        assert queue.take_back_expired(other).requeued == []
        assert queue.get(job.id).status is JobStatus.PROCESSING
    finally:
        finish.set()
        drain.join(10)
    assert queue.get(job.id).status is JobStatus.COMPLETED
    qtbot.waitUntil(lambda: "san-job-leases" not in {thread.name for thread in threading.enumerate()}, timeout=5_000)


@pytest.fixture
def desktop(postgres_library_url: str, tmp_path: Path) -> Iterator[Database]:
    """The machine that stays: a data folder of its own on the shared library."""
    folder = tmp_path / "desktop"
    folder.mkdir()
    database = open_server_database(postgres_library_url, folder)
    yield database
    database.dispose()


@pytest.mark.postgresql
def test_a_killed_machines_job_is_taken_over_within_its_lease(
    qtbot: QtBot, desktop: Database, postgres_library_url: str, tmp_path: Path
) -> None:
    settings = fast_settings(lease_seconds=LEASE)
    queue = JobStore(desktop, settings)
    job = queue.enqueue(JobType.CARD_ANALYSIS, "wait")
    laptop_folder = tmp_path / "laptop"
    laptop_folder.mkdir()
    laptop = subprocess.Popen(
        [sys.executable, "-m", "tests.support.lease_worker", str(laptop_folder), str(LEASE)],
        env=child_env(**{DATABASE_URL_ENV: postgres_library_url}),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    ran: list[str] = []
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, lambda context: ran.append(context.job.id))
    runner = JobRunner(queue, registry, start_session(desktop, "headless"), settings)
    try:
        assert laptop.stdout is not None
        assert laptop.stdout.readline().strip() == f"running {job.id}"
        claimed = queue.get(job.id)
        first_lease = _lease_of(queue, job.id)
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        # the laptop lives: its job stays its own for three leases, renewed, whatever the desktop looks for
        qtbot.waitUntil(lambda: (_lease_of(queue, job.id) - first_lease).total_seconds() > 3 * LEASE, timeout=20_000)
        assert ran == []
        assert queue.get(job.id).owner_session == claimed.owner_session

        laptop.kill()  # SIGKILL: no word to anyone
        laptop.wait(10)
        killed_at = time.monotonic()
        qtbot.waitUntil(lambda: queue.get(job.id).status is JobStatus.COMPLETED, timeout=20_000)
        taken_over_in = time.monotonic() - killed_at
    finally:
        runner.shutdown()
        if laptop.poll() is None:
            laptop.kill()
            laptop.wait(10)
        if laptop.stdout is not None:
            laptop.stdout.close()
    assert ran == [job.id]
    # the lease, and a quarter of one until the desktop looks again, with a margin for a loaded machine
    assert taken_over_in < LEASE * 1.25 + 1.5
    assert [attempt.outcome for attempt in queue.attempts(job.id)] == [
        AttemptOutcome.INTERRUPTED,
        AttemptOutcome.SUCCEEDED,
    ]
