"""A TIL whose job stops without its processor saying so (cancelled, bulk-cancelled, failed by the recovery
sweep after too many interruptions) follows the job to FAILED at the step that was running, with the
reason, so the TIL page and `san til list/show` offer Retry instead of showing a step that nothing runs."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.core.workflow import TilStatus
from san_desktop.db.models import DailySummary
from san_desktop.jobs.processors import registry_for
from san_desktop.queue.monitor import JobFilter
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from san_desktop.services.recovery.sweep import sweep
from tests.support.jobs import fast_settings
from tests.support.til import TEXTS, ScriptedProvider, cards_of, executor, run_one

TIL_JOBS = JobFilter(job_types=frozenset({JobType.TIL_GENERATION}))


@pytest.fixture
def provider(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> ScriptedProvider:
    scripted = ScriptedProvider()
    monkeypatch.setattr(app.providers, "_provider", scripted)
    return scripted


def _cancel_one(app: SanApp, job_id: str) -> None:
    app.cancel_job(job_id)


def _cancel_all(app: SanApp, _job_id: str) -> None:
    assert app.jobs.cancel_matching(TIL_JOBS).count == 1


@pytest.mark.parametrize("cancel", [_cancel_one, _cancel_all], ids=["cancel", "bulk cancel"])
def test_a_til_cancelled_while_drafting_is_failed_at_the_draft_step(
    app: SanApp, provider: ScriptedProvider, cancel: Callable[[SanApp, str], None]
) -> None:
    cards_of(app, TEXTS)
    day = app.til.today()
    job_id = app.generate_til(day).value.id
    provider.hold_draft = threading.Event()
    claim = app.queue.claim_next(app.backend.require_session(), JobPool.AI, {JobType.TIL_GENERATION})
    assert claim is not None
    worker = threading.Thread(target=executor(app).run, args=(claim,))
    worker.start()
    try:
        assert provider.drafting.wait(20)
        assert app.til.get(day).status is TilStatus.DRAFTING
        cancel(app, job_id)
        view = app.til.get(day)
    finally:
        provider.hold_draft.set()
        worker.join(30)
    assert app.queue.get(job_id).status is JobStatus.CANCELLED
    assert view.status is TilStatus.FAILED
    assert view.last_failed_step == "draft"
    assert view.last_error_message == "Cancelled while the draft step ran."
    assert view.active_job_id is None
    assert app.til.get(day).status is TilStatus.FAILED  # the stopped run wrote nothing after it
    assert [info.status for info in app.til.days() if info.local_date == day] == [TilStatus.FAILED]

    app.generate_til(day)  # Retry
    assert run_one(app, JobType.TIL_GENERATION).status is JobStatus.COMPLETED
    assert app.til.get(day).status is TilStatus.COMPLETED
    assert provider.til_calls == 2  # the cancelled draft, and the retry's


@pytest.fixture
def job_settings() -> JobSettings:
    return fast_settings(max_interruptions=1)


def test_a_til_interrupted_too_often_is_failed_at_its_step_by_the_sweep(
    app: SanApp, provider: ScriptedProvider
) -> None:
    """What a process killed inside the link step leaves: the summary LINKING, the job PROCESSING for a dead
    session. The sweep fails the job (``max_interruptions`` is 1 here); the summary follows it."""
    cards_of(app, TEXTS)
    day = app.til.today()
    app.generate_til(day)
    dead = start_session(app.db, "headless")
    claim = app.queue.claim_next(dead, JobPool.AI, {JobType.TIL_GENERATION})
    assert claim is not None
    with app.db.write() as session:
        summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == day))
        assert summary is not None
        summary.status = TilStatus.LINKING  # as the dead process left it

    headless = JobStore(app.db, app.settings.jobs)  # as `san jobs run` has it: a queue of its own
    report = sweep(headless, app.backend.require_session(), app.settings.jobs, hooks=registry_for(app).sweep_hooks)

    assert report.failed_interrupted == [claim.job.id]
    view = app.til.get(day)
    assert view.status is TilStatus.FAILED
    assert view.last_failed_step == "link"
    assert view.last_error_message is not None
    assert view.last_error_message.startswith("Interrupted 1 times")
