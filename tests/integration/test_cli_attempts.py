"""``san jobs show --json`` tells every attempt that did not succeed (when, in which session, why) and the
one that did, as the job row keeps it (issue 26); an attempt cut short by a dead app (SIGKILL) shows as
interrupted once the sweep has found it."""

from __future__ import annotations

import json
from typing import Any

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobType
from san_desktop.core.errors import TransientError
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.services.app_sessions import start_session
from san_desktop.services.recovery.sweep import sweep
from tests.support.processes import run_san


def _shown(job_id: str) -> dict[str, Any]:
    result = run_san("jobs", "show", job_id, "--json")
    assert result.returncode == 0, result.stderr
    shown: dict[str, Any] = json.loads(result.stdout)
    return shown


def _executor(app: SanApp, session_id: str, fails: int) -> JobExecutor:
    registry = ProcessorRegistry()
    seen: list[int] = []

    def flaky(context: JobContext) -> None:
        seen.append(context.claim.attempt)
        if len(seen) <= fails:
            raise TransientError(f"the server was busy (try {len(seen)})")

    registry.register(JobType.CARD_ANALYSIS, flaky)
    return JobExecutor(app.queue, registry, session_id, breakers={})


def test_a_job_that_failed_twice_then_succeeded_shows_both_failures_and_the_success(app: SanApp) -> None:
    job = app.queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    session_id = app.backend.require_session()
    runner = _executor(app, session_id, fails=2)
    for _ in range(3):
        app.queue.wake({JobType.CARD_ANALYSIS})  # (the backoff waited out)
        claim = app.queue.claim_next(session_id, JobPool.AI, {JobType.CARD_ANALYSIS})
        assert claim is not None
        runner.run(claim)
    shown = _shown(job.id)
    assert shown["job"]["status"] == "COMPLETED"
    attempts = shown["attempts"]
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [
        (1, "RETRY_SCHEDULED"),
        (2, "RETRY_SCHEDULED"),
        (3, "SUCCEEDED"),
    ]
    for number, failed in enumerate(attempts[:2], start=1):
        assert failed["session_id"] == session_id
        assert failed["started_at"] <= failed["ended_at"]
        assert f"the server was busy (try {number})" in failed["error_text"]
    assert attempts[2]["run_id"] == shown["job"]["run_id"]


def test_an_attempt_of_an_app_that_died_shows_as_interrupted_after_the_sweep(app: SanApp) -> None:
    job = app.queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")
    dead = start_session(app.db, "gui")  # an app killed while it ran the job: its session never ended
    assert app.queue.claim_next(dead, JobPool.AI, {JobType.CARD_ANALYSIS}) is not None
    running = _shown(job.id)["attempts"]
    assert [(a["attempt"], a["outcome"], a["session_id"]) for a in running] == [(1, None, dead)]
    sweep(app.queue, app.backend.require_session(), app.settings.jobs)
    shown = _shown(job.id)
    assert shown["job"]["status"] == "PENDING"
    assert [(a["attempt"], a["outcome"], a["session_id"]) for a in shown["attempts"]] == [(1, "INTERRUPTED", dead)]
    assert "The app stopped" in shown["attempts"][0]["error_text"]
