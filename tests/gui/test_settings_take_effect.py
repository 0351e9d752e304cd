"""Saving settings ends a pause of the AI pool at once: jobs the breaker held run without waiting for
the cooldown (a long one here, so only the settings can end it within the test)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.errors import TransientError
from san_desktop.core.settings import AISettings, JobSettings
from san_desktop.jobs.breaker import BreakerState
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.ui.common.context import AppContext
from tests.support.jobs import fast_settings


@pytest.fixture
def job_settings() -> JobSettings:
    return fast_settings(
        breaker_cooldown_seconds=3600.0, breaker_max_cooldown_seconds=3600.0, backoff_base_seconds=600.0
    )


def test_saving_settings_lets_jobs_held_by_the_breaker_run_at_once(
    qtbot: QtBot, context: AppContext, registry: ProcessorRegistry
) -> None:
    server_fixed = threading.Event()

    def analyse(_job: JobContext) -> None:
        if not server_fixed.is_set():
            raise TransientError("the AI server at the old address does not answer")

    registry.register(JobType.CARD_ANALYSIS, analyse)
    runner = context.runner
    with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
        context.start(poll_ms=100)
    with qtbot.waitSignal(
        runner.breaker_changed, check_params_cb=lambda c: c.status.state is BreakerState.OPEN, timeout=10_000
    ):
        jobs = [context.app.queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}", max_attempts=100).id for n in range(6)]
    # held: none ran to the end (one may still be finishing its failing attempt on the other thread)
    assert not any(context.app.queue.get(job).status is JobStatus.COMPLETED for job in jobs)

    server_fixed.set()  # the user fixes the server address in Settings and saves
    fixed = replace(context.settings, ai=AISettings(base_url="http://127.0.0.1:9/v1"))
    with qtbot.waitSignal(context.hub.changed, timeout=5_000):
        context.ops.write(lambda: context.app.save_settings(fixed))
    qtbot.waitUntil(
        lambda: all(context.app.queue.get(job).status is JobStatus.COMPLETED for job in jobs), timeout=5_000
    )
    status = runner.breaker_status()
    assert status is not None
    assert status.state is BreakerState.CLOSED


def test_the_window_runs_the_embedded_provider_on_one_thread_and_a_server_on_the_pool_size(
    qtbot: QtBot, live_context: AppContext
) -> None:
    context = live_context
    ai_pool = context.runner.pools[JobPool.AI]
    assert context.settings.ai.provider == "local"
    embedded = 1  # one card at a time, in the embedded AI's one child process (Settings.ai_threads_with_window)
    assert ai_pool.maxThreadCount() == embedded
    server = replace(
        context.settings,
        jobs=replace(context.settings.jobs, ai_pool_size=3),
        ai=AISettings(provider="openai", base_url="http://127.0.0.1:9/v1"),
    )
    with qtbot.waitSignal(context.hub.changed, timeout=5_000):
        context.ops.write(lambda: context.app.save_settings(server))
    qtbot.waitUntil(lambda: ai_pool.maxThreadCount() == 3, timeout=5_000)  # answers are waited for: calls overlap
    with qtbot.waitSignal(context.hub.changed, timeout=5_000):
        context.ops.write(lambda: context.app.save_settings(replace(server, ai=AISettings())))
    qtbot.waitUntil(lambda: ai_pool.maxThreadCount() == embedded, timeout=5_000)  # 3 asked: one with the window
