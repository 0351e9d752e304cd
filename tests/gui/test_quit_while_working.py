"""Quitting while AI jobs wait on a slow AI server, or while the embedded AI's process is still starting, ends the
app within a few seconds, with no error dialog; the jobs it was running go back to the queue, and the next start
runs them without a "closed unexpectedly" banner. The app runs as a person starts it, in a process of its own;
its window is closed as a person does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp, open_app
from san_desktop.core.enums import AttemptOutcome, JobStatus, JobType
from san_desktop.core.failpoints import ENV_DIR, ENV_POINTS
from san_desktop.core.settings import AISettings, Settings, save_settings
from san_desktop.db.tables import async_jobs
from san_desktop.jobs.executor import CLOSING
from san_desktop.services.app_sessions import end_session, start_session
from san_desktop.ui.common.context import AppContext, build_context
from san_desktop.ui.main_window import MainWindow
from tests.support.jobs import insert_jobs, jobs_of
from tests.support.openai_server import FakeOpenAI, fake_openai_server
from tests.support.processes import child_env, is_running

QUIT_WITHIN_SECONDS = 5.0  # from the window's close to the process's end
TEXTS = (
    "SQLite's WAL mode lets readers read while a writer writes.",
    "A B-tree keeps its keys sorted, so range scans read neighbouring pages.",
)
# the offscreen platform says so for windows it shows
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "systemTrayWindowChanged")


@pytest.fixture
def slow_ai() -> Iterator[FakeOpenAI]:
    """An AI server that holds every request (until the test ends, 30 s at most)."""
    with fake_openai_server() as fake:
        fake.hold = lambda _path, _body: True
        yield fake


def test_quitting_while_ai_jobs_wait_on_a_slow_server_ends_the_app_and_the_next_start_runs_them(
    qtbot: QtBot, data_dir: Path, tmp_path: Path, slow_ai: FakeOpenAI
) -> None:
    data_dir.mkdir(parents=True)
    settings = Settings(ai=AISettings(provider="openai", base_url=slow_ai.url))
    save_settings(data_dir, replace(settings, jobs=replace(settings.jobs, ai_pool_size=2)))
    with open_app(data_dir, kind="cli", lock=False, log_to_stderr=False) as san:
        for text in TEXTS:
            san.capture_text(text)  # each: its card's analysis and its refinement, AI jobs
    close_file = tmp_path / "close-now"
    app = subprocess.Popen(
        [sys.executable, "-m", "tests.support.quit_while_working", str(data_dir), str(close_file)],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        qtbot.waitUntil(lambda: len(slow_ai.requests) >= 2, timeout=90_000)  # both AI threads wait on the server
        close_file.touch()
        assert app.stdout is not None
        assert app.stdout.readline().strip() == "closing"
        closed_at = time.monotonic()
        app.wait(60)
        took = time.monotonic() - closed_at
        stderr = app.stderr.read() if app.stderr is not None else ""
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
        for stream in (app.stdout, app.stderr):
            if stream is not None:
                stream.close()
    log = (data_dir / "logs" / "san.log").read_text(encoding="utf-8")
    assert app.returncode == 0, stderr
    assert took < QUIT_WITHIN_SECONDS, log[-3000:]
    assert "Traceback" not in stderr
    assert "Unexpected error" not in log  # what the crash dialog logs when it shows
    assert "Signal source has been deleted" not in stderr + log

    slow_ai.hold = None  # the AI server answers now
    with open_app(data_dir, kind="gui", log_to_stderr=False) as again:
        jobs = jobs_of(again.queue)
        assert {(job.status, job.attempts) for job in jobs} == {(JobStatus.PENDING, 0)}  # no attempt spent
        interrupted = [job for job in jobs if again.queue.attempts(job.id)]
        assert len(interrupted) == 2  # the two the quit interrupted, given back to the queue
        context = build_context(again)
        window = MainWindow(context)
        qtbot.addWidget(window)
        window.show()
        with qtbot.waitSignal(context.runner.sweep_finished, timeout=30_000) as swept:
            context.start(poll_ms=100)
        assert swept.args is not None
        assert swept.args[0].requeued_interrupted == []  # nothing was left running: nothing to recover
        qtbot.waitUntil(lambda: all(job.status is JobStatus.COMPLETED for job in jobs_of(again.queue)), timeout=60_000)
        assert not window.banner.isVisible()
        assert "unexpectedly" not in window.banner.label.text()
        for job in interrupted:
            assert [(attempt.outcome, attempt.error_text) for attempt in again.queue.attempts(job.id)] == [
                (AttemptOutcome.INTERRUPTED, CLOSING),
                (AttemptOutcome.SUCCEEDED, None),
            ]
        window.close()


def test_quitting_while_the_embedded_ais_process_is_still_starting_ends_the_app_and_that_process(
    qtbot: QtBot, data_dir: Path, tmp_path: Path
) -> None:
    """Issue 38 follow-up: a child still loading its encoder at quit was left to finish, and the app's quit waited
    for its warm-up (10 s, then ended by force)."""
    data_dir.mkdir(parents=True)
    save_settings(data_dir, Settings())  # the embedded AI, in a process of its own as the window runs it
    close_file = tmp_path / "close-now"
    warming = tmp_path / "own_process.warm_up.reached"  # the child is there: it will not get further
    stderr_file = tmp_path / "app.err"  # (a file: a child left behind would hold a pipe open)
    with stderr_file.open("w", encoding="utf-8") as stderr_out:
        app = subprocess.Popen(
            [sys.executable, "-m", "tests.support.quit_while_working", str(data_dir), str(close_file)],
            env=child_env(**{ENV_POINTS: "own_process.warm_up", ENV_DIR: str(tmp_path)}),
            stdout=subprocess.PIPE,
            stderr=stderr_out,
            text=True,
        )
    child = 0
    try:
        qtbot.waitUntil(lambda: warming.exists() and bool(warming.read_text()), timeout=90_000)
        child = int(warming.read_text())
        close_file.touch()
        assert app.stdout is not None
        assert app.stdout.readline().strip() == "closing"
        closed_at = time.monotonic()
        app.wait(60)
        took = time.monotonic() - closed_at
        child_left = is_running(child)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
        if app.stdout is not None:
            app.stdout.close()
        if child and is_running(child):
            os.kill(child, signal.SIGKILL)
    stderr = stderr_file.read_text(encoding="utf-8")
    log = (data_dir / "logs" / "san.log").read_text(encoding="utf-8")
    assert app.returncode == 0, stderr
    assert took < QUIT_WITHIN_SECONDS, log[-3000:]
    assert not child_left
    assert "Traceback" not in stderr
    assert "could not start its own process" not in log  # stopped by the quit, not a failure to start
    assert "still running after the quit" not in log  # nothing was left for the process's forced end


@pytest.mark.qt_log_ignore("does not support raise")
def test_jobs_a_quit_left_running_resume_without_a_crash_banner(
    qtbot: QtBot, live_context: AppContext, app: SanApp
) -> None:
    """A quit that could not give every job back in time (a database busy at that moment) left them running
    in a session it recorded as ended: nothing unexpected happened, and the banner says nothing of a crash."""
    quit_session = start_session(app.db, "gui")
    left = insert_jobs(app.queue, 2, status=JobStatus.PROCESSING, error=None, job_type=JobType.TIL_GENERATION)
    crashed = insert_jobs(
        app.queue, 1, status=JobStatus.PROCESSING, error=None, job_type=JobType.TIL_GENERATION, target=lambda _n: "t"
    )
    with app.db.write_connection() as conn:
        conn.execute(sa.update(async_jobs).where(async_jobs.c.id.in_(left)).values(owner_session=quit_session))
    end_session(app.db, quit_session)
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000) as swept:
        live_context.start(poll_ms=100)

    assert swept.args is not None
    assert sorted(swept.args[0].requeued_interrupted) == sorted(left + crashed)
    assert sorted(swept.args[0].requeued_after_quit) == sorted(left)
    assert "1 job interrupted when SAN Desktop last closed unexpectedly was resumed." in window.banner.label.text()
    assert window.statusBar().currentMessage() == "2 jobs stopped when SAN Desktop was last closed resumed."
