"""A window's runner on a library shared through a PostgreSQL server hears of another machine's queued and
cancelled jobs, and of its new cards, as they commit (LISTEN/NOTIFY), with its own polling turned far out of
reach."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pytestqt.exceptions import TimeoutError as WaitTimedOut
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import AttemptOutcome, JobPool, JobStatus, JobType
from san_desktop.core.paths import machine_id
from san_desktop.core.settings import DATABASE_URL_ENV, JobSettings
from san_desktop.db.database import Database, open_server_database
from san_desktop.db.models import AppSession, AsyncJob, JobAttempt, KnowledgeCard
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from san_desktop.services.scraps import ScrapService
from tests.support.postgres import notices_of
from tests.support.processes import child_env

TOLD_WITHIN_MS = 2_000  # the bound for another machine's change to reach an open window
NEVER_POLLS = JobSettings(poll_interval_seconds=3_600.0)
WAITING_TYPE = JobType.GITHUB_STAR_RECOMMENDATION  # no processor on the window's machine: it only watches


def test_another_machines_queued_and_cancelled_jobs_reach_the_runner_without_polling_and_its_completions_at_a_look(
    qtbot: QtBot, machines: tuple[Database, Database]
) -> None:
    """Revision 0028: what the window's machine must act on (a job to run, one to stop) is told as it commits; a
    job's completion is not (two notifications for every job that ran, read back by every runner), and is read
    at the runner's next look."""
    window, desktop = machines  # (the laptop's window)
    runner = JobRunner(JobStore(window, NEVER_POLLS), ProcessorRegistry(), start_session(window, "gui"), NEVER_POLLS)
    other = JobStore(desktop, NEVER_POLLS)
    desktop_session = start_session(desktop, "headless")
    try:
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        qtbot.waitUntil(notices_of(window).listening.is_set, timeout=10_000)

        def external(status: JobStatus) -> Callable[[object], bool]:
            return lambda event: isinstance(event, JobEvent) and event.external and event.new_status is status

        with qtbot.waitSignal(runner.job_changed, check_params_cb=external(JobStatus.PENDING), timeout=TOLD_WITHIN_MS):
            job = other.enqueue(WAITING_TYPE, "account-1")
        with qtbot.waitSignal(
            runner.job_changed, check_params_cb=external(JobStatus.CANCELLED), timeout=TOLD_WITHIN_MS
        ):
            other.cancel(other.enqueue(WAITING_TYPE, "account-2").id)
        claim = other.claim_next(desktop_session, JobPool.GITHUB, frozenset({WAITING_TYPE}))
        assert claim is not None
        assert claim.job.id == job.id
        completed: list[JobEvent] = []
        runner.job_changed.connect(
            lambda event: completed.append(event) if external(JobStatus.COMPLETED)(event) else None
        )
        other.complete(claim)
        runner.apply_settings(JobSettings(poll_interval_seconds=0.1))  # the runner looks now and then again
        qtbot.waitUntil(lambda: bool(completed), timeout=10_000)
        assert completed[0].job_id == job.id
    finally:
        runner.shutdown()


def test_a_change_stamped_long_before_it_commits_is_told_all_the_same(
    qtbot: QtBot, machines: tuple[Database, Database]
) -> None:
    """A job's row is stamped before its transaction commits, by its machine's estimate of the server's time:
    a machine whose estimate lags (or a commit held up on a loaded machine) makes a change that becomes visible
    after newer-stamped ones. A read of what changed since the newest change seen would pass over it; the
    notification names the job as it commits."""
    window, desktop = machines
    runner = JobRunner(JobStore(window, NEVER_POLLS), ProcessorRegistry(), start_session(window, "gui"), NEVER_POLLS)
    on_time = JobStore(desktop, NEVER_POLLS)
    lagging = JobStore(desktop, NEVER_POLLS, clock=lambda: desktop.clock() - timedelta(minutes=5))
    heard: list[str] = []
    runner.job_changed.connect(lambda event: heard.append(event.job_id) if event.external else None)
    try:
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        qtbot.waitUntil(notices_of(window).listening.is_set, timeout=10_000)
        first = on_time.enqueue(WAITING_TYPE, "account-1")
        qtbot.waitUntil(lambda: first.id in heard, timeout=TOLD_WITHIN_MS)

        late = lagging.enqueue(WAITING_TYPE, "account-2")

        qtbot.waitUntil(lambda: late.id in heard, timeout=TOLD_WITHIN_MS)
        assert late.updated_at < first.updated_at - timedelta(minutes=4)
    finally:
        runner.shutdown()


def test_a_failed_read_of_the_jobs_named_is_made_again(
    qtbot: QtBot, machines: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first read that would find the job fails (a dropped connection of the pool): with no later
    notification and no polling, the window would never hear of it; it reads again in a while."""
    window, desktop = machines
    queue = JobStore(window, NEVER_POLLS)
    runner = JobRunner(queue, ProcessorRegistry(), start_session(window, "gui"), NEVER_POLLS)
    heard: list[str] = []
    runner.job_changed.connect(lambda event: heard.append(event.job_id) if event.external else None)
    wanted: list[str] = []  # the job whose first read fails
    failed: list[str] = []

    def failing_once(read: Callable[..., list[JobRecord]]) -> Callable[..., list[JobRecord]]:
        def reads(*args: Any, **kwargs: Any) -> list[JobRecord]:
            jobs = read(*args, **kwargs)
            if wanted and not failed and any(job.id in wanted for job in jobs):
                failed.append(read.__name__)
                raise sa.exc.OperationalError("SELECT", {}, ConnectionError("server closed the connection"))
            return jobs

        return reads

    monkeypatch.setattr(queue, "jobs_named", failing_once(queue.jobs_named))
    monkeypatch.setattr(queue, "changed_since", failing_once(queue.changed_since))
    try:
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        qtbot.waitUntil(notices_of(window).listening.is_set, timeout=10_000)
        # the read that listening began with (what was written before is unknown) is over
        qtbot.waitUntil(lambda: runner._poll_signals is None and not runner._told_unknown, timeout=10_000)

        # (the notification is answered on this thread's event loop: not before the next wait)
        wanted.append(JobStore(desktop, NEVER_POLLS).enqueue(WAITING_TYPE, "account-1").id)

        qtbot.waitUntil(lambda: wanted[0] in heard, timeout=10_000)
        assert failed
    finally:
        runner.shutdown()


SCRAPS = 1_000
KILLS_PER_MACHINE = 3


def _start_machine(folder: Path, url: str, log: Path, *, until_idle: bool = False) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "san_desktop.cli.main", "--data-dir", str(folder), "jobs", "run"]
    if until_idle:
        command += ["--until-idle", "--wait-retries", "--timeout", "600"]
    with log.open("a", encoding="utf-8") as stderr:
        return subprocess.Popen(
            command, env=child_env(**{DATABASE_URL_ENV: url}), stdout=subprocess.DEVNULL, stderr=stderr, text=True
        )


def _running_attempts(db: Database, folder: Path) -> set[tuple[str, int]]:
    """(job, attempt) of what the machine of ``folder`` is running now."""
    with db.sessions() as session:
        rows = session.execute(
            sa.select(AsyncJob.id, AsyncJob.attempts)
            .join(AppSession, AppSession.id == AsyncJob.owner_session)
            .where(AsyncJob.status == JobStatus.PROCESSING, AppSession.machine_id == machine_id(folder))
        )
        return {(job_id, attempt) for job_id, attempt in rows}


@pytest.mark.slow
def test_two_machines_killed_again_and_again_drain_a_thousand_scraps_and_a_window_sees_each_card_at_once(
    qtbot: QtBot, postgres_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The issue's acceptance: two headless runners (``san jobs run``) as two machines, each SIGKILLed at random
    moments while draining 1,000 scraps, then drained: one card per scrap, no job completed twice, none stuck;
    a window on a third data folder, which never polls, hears of every card within 2 s."""
    folders = {name: tmp_path / name for name in ("laptop", "desktop", "window")}
    for folder in folders.values():
        folder.mkdir()
    window = open_server_database(postgres_url, folders["window"])
    request.addfinalizer(window.dispose)  # (again below: disposing twice is harmless)
    queue = JobStore(window, NEVER_POLLS)
    scraps = ScrapService(window, queue)
    scrap_ids = {scraps.capture(f"Note {n}: {text}").scrap_id for n, text in enumerate(_texts(SCRAPS))}
    runner = JobRunner(queue, ProcessorRegistry(), start_session(window, "gui"), NEVER_POLLS)
    lags: dict[str, float] = {}  # card job -> seconds from its completion to the window hearing of it

    def heard(event: JobEvent) -> None:
        job = event.job
        if event.external and job.job_type is JobType.CARD_ANALYSIS and job.status is JobStatus.COMPLETED:
            assert job.finished_at is not None
            lags.setdefault(job.id, (window.clock() - job.finished_at).total_seconds())

    runner.job_changed.connect(heard)
    rng = random.Random(SCRAPS)
    kills = sorted(
        (threshold, name)
        for name in ("laptop", "desktop")
        for threshold in rng.sample(range(50, SCRAPS - 200), KILLS_PER_MACHINE)
    )
    logs = {name: tmp_path / f"{name}.log" for name in ("laptop", "desktop")}
    machines = {name: _start_machine(folders[name], postgres_url, logs[name]) for name in logs}
    killed_attempts: set[tuple[str, int]] = set()
    try:
        with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
            runner.start()
        for threshold, name in kills:
            qtbot.waitUntil(_heard_at_least(lags, threshold), timeout=180_000)
            machines[name].kill()  # SIGKILL: no cleanup of any kind
            machines[name].wait(timeout=60)
            killed_attempts |= _running_attempts(window, folders[name])
            machines[name] = _start_machine(folders[name], postgres_url, logs[name])
        for name in machines:
            machines[name].kill()
            machines[name].wait(timeout=60)
        finals = [_start_machine(folders[name], postgres_url, logs[name], until_idle=True) for name in machines]
        # waited for with the window's events going on (a blocking wait would hold its notifications back)
        qtbot.waitUntil(lambda: all(final.poll() is not None for final in finals), timeout=600_000)
        assert [final.returncode for final in finals] == [0, 0], logs_tail(logs)
        try:
            qtbot.waitUntil(lambda: len(lags) == SCRAPS, timeout=30_000)
        except WaitTimedOut:
            pytest.fail(f"{SCRAPS - len(lags)} cards never heard of; some: {_unheard(window, lags)}")
    finally:
        runner.shutdown()
        for process in machines.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=60)

    try:
        with window.sessions() as session:
            cards = Counter(session.scalars(sa.select(KnowledgeCard.scrap_id)))
            statuses = Counter(
                (row.job_type, row.status) for row in session.execute(sa.select(AsyncJob.job_type, AsyncJob.status))
            )
            outcomes = Counter(session.scalars(sa.select(JobAttempt.outcome)))
            history = {
                (row.job_id, row.attempt): row.outcome
                for row in session.execute(sa.select(JobAttempt.job_id, JobAttempt.attempt, JobAttempt.outcome))
            }
    finally:
        window.dispose()
    assert set(cards) == scrap_ids
    assert set(cards.values()) == {1}
    assert statuses == {
        (JobType.CARD_ANALYSIS, JobStatus.COMPLETED): SCRAPS,
        (JobType.SCRAP_REFINE, JobStatus.COMPLETED): SCRAPS,
    }  # none stuck, none failed
    # no job completed twice: a second run's result would have been refused and recorded as DISCARDED
    assert AttemptOutcome.DISCARDED not in outcomes
    assert killed_attempts, "no kill landed while a job was running"
    assert {history[attempt] for attempt in killed_attempts} == {AttemptOutcome.INTERRUPTED}
    assert max(lags.values()) < TOLD_WITHIN_MS / 1000, sorted(lags.values())[-10:]


def _unheard(db: Database, lags: dict[str, float]) -> list[tuple[str | datetime | None, ...]]:
    """Card jobs the window never heard of, as they are now (some)."""
    columns = (AsyncJob.id, AsyncJob.status, AsyncJob.updated_at, AsyncJob.finished_at)
    with db.sessions() as session:
        rows = session.execute(sa.select(*columns).where(AsyncJob.job_type == JobType.CARD_ANALYSIS))
        return [tuple(row) for row in rows if row.id not in lags][:5]


def _heard_at_least(lags: dict[str, float], count: int) -> Callable[[], bool]:
    return lambda: len(lags) >= count


def _texts(count: int) -> list[str]:
    topics = (
        "PostgreSQL keeps old row versions until VACUUM reclaims them",
        "SQLite's write-ahead log lets readers go on while one writer appends",
        "Raft elects a leader that replicates its log to the followers",
        "React hooks keep state in function components",
        "트랜잭션 격리 수준은 동시에 실행되는 트랜잭션이 서로의 변경을 얼마나 보는지 정한다",
    )
    return [f"{topics[n % len(topics)]} (seen in chapter {n // len(topics) + 1})." for n in range(count)]


def logs_tail(logs: dict[str, Path]) -> str:
    return "\n".join(f"--- {name}\n{path.read_text(errors='replace')[-2000:]}" for name, path in logs.items())
