"""A window's runner on a library shared through a PostgreSQL server hears of another machine's jobs as
they commit (LISTEN/NOTIFY), with its own polling turned far out of reach."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.database import Database, open_server_database
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.job_queue import JobQueue
from san_desktop.queue.records import JobEvent
from san_desktop.services.app_sessions import start_session

TOLD_WITHIN_MS = 2_000  # the bound for another machine's change to reach an open window
NEVER_POLLS = JobSettings(poll_interval_seconds=3_600.0)
WAITING_TYPE = JobType.GITHUB_STAR_RECOMMENDATION  # no processor on the window's machine: it only watches


@pytest.fixture
def machines(postgres_url: str, tmp_path: Path) -> Iterator[tuple[Database, Database]]:
    opened = []
    for name in ("window", "desktop"):
        (tmp_path / name).mkdir()
        opened.append(open_server_database(postgres_url, tmp_path / name))
    yield opened[0], opened[1]
    for database in opened:
        database.dispose()


def test_another_machines_jobs_reach_the_runner_without_polling(
    qtbot: QtBot, machines: tuple[Database, Database]
) -> None:
    window, desktop = machines
    runner = JobRunner(JobQueue(window, NEVER_POLLS), ProcessorRegistry(), start_session(window, "gui"), NEVER_POLLS)
    other = JobQueue(desktop, NEVER_POLLS)
    desktop_session = start_session(desktop, "headless")
    try:
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        assert window._notices is not None
        qtbot.waitUntil(window._notices.listening.is_set, timeout=10_000)

        def external(status: JobStatus) -> Callable[[object], bool]:
            return lambda event: isinstance(event, JobEvent) and event.external and event.new_status is status

        with qtbot.waitSignal(runner.job_changed, check_params_cb=external(JobStatus.PENDING), timeout=TOLD_WITHIN_MS):
            job = other.enqueue(WAITING_TYPE, "account-1")
        claim = other.claim_next(desktop_session, JobPool.GITHUB, frozenset({WAITING_TYPE}))
        assert claim is not None
        with qtbot.waitSignal(
            runner.job_changed, check_params_cb=external(JobStatus.COMPLETED), timeout=TOLD_WITHIN_MS
        ) as done:
            other.complete(claim)
        assert done.args[0].job_id == job.id
    finally:
        runner.shutdown()
