"""A key the AI server rejects pauses the AI pool at once, says so on the Jobs page and in the status bar,
and keeps every job waiting until a new key is saved (issue 23: a 401 failed the jobs one by one)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import JobPool, JobStatus
from san_desktop.core.settings import AISettings
from san_desktop.jobs.breaker import BreakerState, BreakerStatus
from san_desktop.jobs.runner import BreakerChange, PoolState
from san_desktop.services.secrets import AI_API_KEY, set_secret
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from tests.support.jobs import analysis_job
from tests.support.openai_server import FakeOpenAI, fake_openai_server

REJECTED = (
    "The AI server rejected the API key (401): for a valid one, enter it in Settings or with "
    "`san config set ai.api_key` (kept in the keyring), or set OPENAI_API_KEY"
)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_a_rejected_key_pauses_the_ai_pool_until_a_new_key_is_saved(
    qtbot: QtBot, live_context: AppContext, server: FakeOpenAI
) -> None:
    context = live_context
    set_secret(AI_API_KEY, "sk-wrong-key-0123456789")
    ai = AISettings(provider="openai", base_url=server.url, chat_model="gpt-test", embedding_model="embed-test")
    context.app.save_settings(replace(context.settings, ai=ai))
    server.behaviour = "401"
    page = JobsPage(context)
    qtbot.addWidget(page)
    page.show()
    with qtbot.waitSignal(context.runner.sweep_finished, timeout=10_000):
        context.start(poll_ms=100)
    jobs = [analysis_job(context.app.scraps.capture(f"SQLite WAL note number {n}.")) for n in range(3)]

    qtbot.waitUntil(lambda: context.runner.pool_status(JobPool.AI).reason is not None, timeout=10_000)
    status = context.runner.pool_status(JobPool.AI)
    assert status.state is PoolState.PAUSED_BY_BREAKER
    assert status.seconds_left is None  # no countdown: it ends when the key changes, or on "Try now"
    qtbot.waitUntil(lambda: page.pools.try_now_button.isVisibleTo(page), timeout=5_000)
    assert page.pools.labels[JobPool.AI].text() == f"AI jobs: paused. {REJECTED}"
    assert {context.app.queue.get(job).status for job in jobs} == {JobStatus.PENDING}
    assert [context.app.queue.get(job).attempts for job in jobs] == [0, 0, 0]

    server.behaviour = "ok"  # the key the user now types in is one the server accepts
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    dialog.api_key.setText("sk-right-key-0123456789")
    dialog._on_save()
    qtbot.waitUntil(
        lambda: {context.app.queue.get(job).status for job in jobs} == {JobStatus.COMPLETED}, timeout=10_000
    )
    qtbot.waitUntil(lambda: not page.pools.try_now_button.isVisibleTo(page), timeout=5_000)
    assert server.requests[-1].headers["Authorization"] == "Bearer sk-right-key-0123456789"


def test_the_status_bar_says_what_to_fix(qtbot: QtBot, live_context: AppContext) -> None:
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    held = BreakerStatus(BreakerState.OPEN, 1, None, 60.0, held=REJECTED)
    live_context.runner.breaker_changed.emit(BreakerChange(JobPool.AI, held))
    assert window.statusBar().currentMessage() == f"AI jobs paused. {REJECTED}."
    failing = BreakerStatus(BreakerState.OPEN, 5, time.monotonic() + 60, 60.0)
    live_context.runner.breaker_changed.emit(BreakerChange(JobPool.AI, failing))
    assert "AI server unreachable or failing: AI jobs paused after 5 failures in a row" in (
        window.statusBar().currentMessage()
    )
