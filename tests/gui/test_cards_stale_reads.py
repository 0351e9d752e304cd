"""The Cards page shows the newest state of a card: a read begun before a change that finishes after the read
the change asked for must not put back what the change took away."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.app import Changes
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.queue.records import JobRecord
from san_desktop.services.changes import SCRAP_JOB_TYPES
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from tests.integration.services.test_similar_meaning import ENGLISH
from tests.support.jobs import jobs_of
from tests.support.til import cards_of


def _page_with_one_card(qtbot: QtBot, live_context: AppContext) -> tuple[CardsPage, str]:
    """A Cards page showing the one card of a scrap, and that scrap's id."""
    cards_of(live_context.app, [ENGLISH["docker"]])
    page = CardsPage(live_context)
    qtbot.addWidget(page)
    qtbot.waitUntil(lambda: page.model.rowCount() == 1, timeout=10_000)
    return page, page.model.loaded_rows()[0].scrap_id


def test_an_older_read_finishing_last_does_not_bring_back_a_deleted_card(
    qtbot: QtBot, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = live_context.app
    page, scrap_id = _page_with_one_card(qtbot, live_context)

    reads = app.cards.cards_of_scraps
    first_read_taken = threading.Event()
    release_first = threading.Event()
    first_answered = threading.Event()
    calls: list[int] = []

    def slow_first(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:  # the read a job's end asked for, before the deletion: it sees the card
            found = reads(*args, **kwargs)
            first_read_taken.set()
            release_first.wait(30)
            first_answered.set()
            return found
        return reads(*args, **kwargs)

    monkeypatch.setattr(app.cards, "cards_of_scraps", slow_first)
    hub = live_context.ops.hub
    hub.tell(Changes(cards_of_scraps=frozenset({scrap_id})))  # e.g. its vector was made
    assert first_read_taken.wait(30)
    app.delete_scrap(scrap_id)
    hub.tell(Changes(scraps=frozenset({scrap_id})))  # the deletion, read after it: no card
    qtbot.waitUntil(lambda: page.model.card_of_scrap(scrap_id) is None, timeout=10_000)

    release_first.set()  # the older read ends last
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=10_000)  # every read begun has reported
    assert first_answered.is_set()  # (the deletion may be read more than once: its own notice, this one)
    assert page.model.card_of_scrap(scrap_id) is None


def test_a_deletion_told_together_with_its_scraps_job_still_takes_the_card_away(
    qtbot: QtBot, live_context: AppContext
) -> None:
    """Another process deleted a scrap, which cancelled its jobs: the window reads the deletion's notice and the
    cancelled job in one look, and they reach the page as one change. The scrap is there because its job moved
    and because it was deleted: the card goes."""
    app = live_context.app
    page, scrap_id = _page_with_one_card(qtbot, live_context)
    (job,) = [job for job in jobs_of(app.queue) if job.target_id == scrap_id and job.job_type in SCRAP_JOB_TYPES][:1]
    app.delete_scrap(scrap_id)
    cancelled = replace(job, status=JobStatus.CANCELLED)
    live_context.ops.hub.tell(Changes.of_job(cancelled, external=True) | Changes.of_scraps([scrap_id]), background=True)
    qtbot.waitUntil(lambda: page.model.card_of_scrap(scrap_id) is None, timeout=10_000)


def test_a_scrap_told_only_by_its_jobs_is_not_read_again_by_the_pages() -> None:
    job_only = Changes.of_job(_job("scrap-1"))
    assert job_only.job_scraps == {"scrap-1"}
    together = job_only | Changes.of_scraps(["scrap-1"]) | Changes.of_job(_job("scrap-2"))
    assert together.scraps == {"scrap-1", "scrap-2"}
    assert together.job_scraps == {"scrap-2"}  # scrap-1 was told for itself too


def _job(target: str) -> JobRecord:
    now = datetime.now(UTC)
    return JobRecord(
        id=f"job-{target}", job_type=JobType.SCRAP_REFINE, target_id=target, status=JobStatus.COMPLETED, attempts=1,
        max_attempts=3, error_message=None, error_kind=None, payload=None, run_after=None, owner_session=None,
        lease_until=None, created_at=now, updated_at=now, started_at=now, finished_at=now,
    )  # fmt: skip
