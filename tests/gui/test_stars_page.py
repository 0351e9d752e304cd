"""The Stars page against a GitHub-shaped server on 127.0.0.1 and the product's processors: Refresh shows the
sync's and the ranking's progress, then the ranked list; "Not interested" removes a row at once (Undo brings
it back) and later runs leave it out; the language filter; Open on GitHub (https only); a failed sync says
why; without a token the page points to Settings."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.services.stars import StarsStatus
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.stars.page import ALL_LANGUAGES, StarsPage
from san_desktop.ui.stars.state import (
    FETCHING,
    NEVER_SYNCED,
    NO_TOKEN,
    RANKING,
    activity,
    compact_count,
    failure_text,
    summary_text,
)
from tests.support.dialogs import close_next_modal
from tests.support.github_server import TOKEN, FakeGitHub
from tests.support.jobs import jobs_of
from tests.support.stars import STAR_TOPICS, connected_github, learn_sqlite_and_react, star_topics
from tests.support.til import run_one

# Showing a top-level widget on the offscreen platform makes Qt warn about size hints it cannot pass on.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")


@pytest.fixture(autouse=True)
def no_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A token in the environment of whoever runs the tests would count as connected."""
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)


@pytest.fixture
def github(app: SanApp) -> Iterator[FakeGitHub]:
    with connected_github(app) as fake:
        yield fake


def _ranked(app: SanApp) -> None:
    """A sync and a ranking, run here (not by the page's runner)."""
    app.refresh_stars()
    assert run_one(app, JobType.GITHUB_STAR_SYNC).status is JobStatus.COMPLETED
    assert run_one(app, JobType.GITHUB_STAR_RECOMMENDATION).status is JobStatus.COMPLETED


def _shown_page(qtbot: QtBot, context: AppContext, opened: list[QUrl] | None = None) -> StarsPage:
    def open_url(url: QUrl) -> bool:
        assert opened is not None
        opened.append(url)
        return True

    page = StarsPage(context, open_url=open_url if opened is not None else None)
    qtbot.addWidget(page)
    page.resize(1000, 700)
    with qtbot.waitSignal(page.loaded, timeout=5_000):
        page.show()
    return page


def _names(page: StarsPage) -> list[str]:
    return [row.full_name for row in page.model.rows]


def _ids(page: StarsPage) -> list[str]:
    return [row.repository_id for row in page.model.rows]


def _shows_run_of(page: StarsPage, job_id: str) -> bool:
    """The page's last load read the ranking ``job_id`` as completed (so its run is what is listed)."""
    snapshot = page.snapshot
    return (
        snapshot is not None
        and snapshot.rank_job is not None
        and snapshot.rank_job.id == job_id
        and snapshot.rank_job.status is JobStatus.COMPLETED
    )


def _completed_rankings(app: SanApp) -> list[str]:
    return [job.id for job in jobs_of(app.queue, JobType.GITHUB_STAR_RECOMMENDATION, statuses=(JobStatus.COMPLETED,))]


def test_refresh_shows_progress_then_the_ranked_list_and_a_row_marked_not_interested_stays_gone(
    qtbot: QtBot, live_context: AppContext, app: SanApp, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance test of the Stars page."""
    # the ranking waits until the page said so: the hub tells a tick's job events as one change, each job in its
    # newest state, so a ranking quicker than a tick would never be seen running
    ranking_said = threading.Event()
    rank = app.stars.rank

    def rank_once_said(*args: Any, **kwargs: Any) -> Any:
        ranking_said.wait(30)
        return rank(*args, **kwargs)

    monkeypatch.setattr(app.stars, "rank", rank_once_said)
    learn_sqlite_and_react(app)
    star_topics(github)
    page = _shown_page(qtbot, live_context)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    assert page.stack.currentWidget() is page.empty_view
    assert page.empty.text() == NEVER_SYNCED
    assert page.refresh_button.isEnabled()

    said: list[str] = []  # what the activity line says after each change the hub tells (the page hears it first)

    def record(*_args: object) -> None:
        text = page.activity.text.text()
        if text and (not said or said[-1] != text):
            said.append(text)
        if text == RANKING:
            ranking_said.set()

    live_context.runner.job_progress.connect(record)
    live_context.hub.changed.connect(record)

    qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
    record()
    assert not page.refresh_button.isEnabled()  # one refresh at a time
    assert page.activity.progress.isVisibleTo(page)

    qtbot.waitUntil(lambda: len(page.model.rows) == 15, timeout=30_000)
    assert said[0] == FETCHING
    assert f"{FETCHING} page 1" in said
    assert RANKING in said
    assert said.index(f"{FETCHING} page 1") < said.index(RANKING)
    qtbot.waitUntil(page.refresh_button.isEnabled, timeout=5_000)
    assert not page.activity.progress.isVisibleTo(page)
    assert not page.activity.text.isVisibleTo(page)
    assert page.activity.summary.text().startswith("15 starred repositories · last synced ")
    assert [row.rank for row in page.model.rows] == list(range(1, 16))
    assert {name.split("-")[0] for name in _names(page)[:5]} <= {"sqlite", "react"}
    assert "“" in page.model.rows[0].reason  # it names the cards it matches

    page.table.selectRow(0)
    top = page.model.rows[0]
    qtbot.mouseClick(page.hide_button, Qt.MouseButton.LeftButton)
    assert top.repository_id not in _ids(page)  # at once, before the write is done
    assert len(page.model.rows) == 14
    qtbot.waitUntil(lambda: "Undo" in page.message.text(), timeout=5_000)
    assert top.full_name in page.message.text()

    first_run = _completed_rankings(app)
    assert len(first_run) == 1
    qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(_completed_rankings(app)) == 2, timeout=30_000)
    (second_run,) = set(_completed_rankings(app)) - set(first_run)
    qtbot.waitUntil(lambda: _shows_run_of(page, second_run), timeout=5_000)
    assert len(page.model.rows) == 14
    assert top.repository_id not in _ids(page)
    assert top.repository_id not in {row.repository_id for row in app.stars.latest(limit=200)}


def test_undo_brings_a_hidden_repository_back(
    qtbot: QtBot, context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    learn_sqlite_and_react(app)
    star_topics(github)
    _ranked(app)
    page = _shown_page(qtbot, context)
    top = page.model.rows[0]
    page.table.selectRow(0)
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page, timeout=5_000)
    page.language.setFocus()
    qtbot.keyClick(page.language, Qt.Key.Key_Delete)  # not in the filter
    assert _ids(page)[0] == top.repository_id
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_Delete)  # in the list, the key does what "Not interested" does
    assert top.repository_id not in _ids(page)
    qtbot.waitUntil(lambda: f"undo:{top.repository_id}" in page.message.text(), timeout=5_000)

    with qtbot.waitSignal(page.loaded, timeout=5_000):
        page.message.linkActivated.emit(f"undo:{top.repository_id}")

    assert _ids(page)[0] == top.repository_id
    assert f"{top.full_name} is back" in page.message.text()
    assert app.stars.latest(limit=1)[0].repository_id == top.repository_id


def test_the_language_filter_lists_the_starred_languages_and_shows_one(
    qtbot: QtBot, context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    learn_sqlite_and_react(app)
    star_topics(github)
    _ranked(app)
    page = _shown_page(qtbot, context)
    items = [page.language.itemText(n) for n in range(page.language.count())]
    assert items == [ALL_LANGUAGES, "C", "Go", "Python", "Rust", "TypeScript"]
    assert len(page.model.rows) == 15

    index = page.language.findText("TypeScript")
    with qtbot.waitSignal(page.loaded, timeout=5_000):
        page.language.setCurrentIndex(index)
        page.language.activated.emit(index)
    assert {row.language for row in page.model.rows} == {"TypeScript"}
    assert sorted(_names(page)) == [f"react-org/react-tool-{n}" for n in range(3)]
    assert page.language.currentText() == "TypeScript"  # kept by the reload

    with qtbot.waitSignal(page.loaded, timeout=5_000):
        page.language.setCurrentIndex(0)
        page.language.activated.emit(0)
    assert len(page.model.rows) == 15


def test_open_on_github_opens_https_addresses_and_refuses_others(
    qtbot: QtBot, context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    learn_sqlite_and_react(app)
    star_topics(github)
    github.star("sqlite-org/mirror", STAR_TOPICS["sqlite"][0], ("sqlite",), html_url="http://mirror.example/sqlite")
    _ranked(app)
    opened: list[QUrl] = []
    page = _shown_page(qtbot, context, opened)

    page.table.selectRow(0)
    top = page.model.rows[0]
    qtbot.mouseClick(page.open_button, Qt.MouseButton.LeftButton)
    assert [url.toString() for url in opened] == [f"https://github.com/{top.full_name}"]

    page.table.selectRow(_names(page).index("sqlite-org/mirror"))
    qtbot.mouseClick(page.open_button, Qt.MouseButton.LeftButton)
    assert len(opened) == 1  # not opened
    assert "Not opened: http://mirror.example/sqlite is not an https address." in page.message.text()


def test_a_failed_sync_shows_its_error_with_a_hint(
    qtbot: QtBot, live_context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    star_topics(github)
    github.next_starred = ["401"]
    page = _shown_page(qtbot, live_context)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)

    qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: page.activity.error.isVisibleTo(page), timeout=30_000)
    error = page.activity.error.text()
    assert "Could not fetch your stars" in error
    assert "GitHub rejected the token (401)" in error
    assert "TokenRejectedError" not in error  # the sentence, not the exception's name
    assert "Open Settings" in error
    assert TOKEN not in error
    qtbot.waitUntil(page.refresh_button.isEnabled, timeout=5_000)  # it may be tried again
    with qtbot.waitSignal(page.settings_requested, timeout=1_000):
        page.activity.error.linkActivated.emit("settings")


def test_a_spent_rate_limit_says_when_the_sync_goes_on(
    qtbot: QtBot, live_context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    star_topics(github)
    github.next_starred = ["ratelimit"]  # its reset two minutes away
    page = _shown_page(qtbot, live_context)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)

    qtbot.mouseClick(page.refresh_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: "rate limit" in page.activity.text.text(), timeout=30_000)
    (job,) = jobs_of(app.queue, JobType.GITHUB_STAR_SYNC)
    assert job.run_after is not None
    at = job.run_after.astimezone().strftime("%H:%M")
    assert page.activity.text.text() == f"GitHub's rate limit is used up: waiting until {at} to fetch your stars again"
    assert page.activity.progress.isVisibleTo(page)
    assert not page.refresh_button.isEnabled()  # the sync is still to run
    assert not page.activity.error.isVisibleTo(page)


def test_stars_without_cards_to_rank_them_against_say_what_to_do(
    qtbot: QtBot, context: AppContext, app: SanApp, github: FakeGitHub
) -> None:
    star_topics(github)
    _ranked(app)  # no card: nothing is recommended
    page = _shown_page(qtbot, context)
    assert page.stack.currentWidget() is page.empty_view
    assert page.empty.text().startswith("Nothing to recommend yet: your 15 starred repositories are ranked")
    assert not page.empty_button.isVisibleTo(page)  # Refresh is above; Settings is not the answer
    assert page.refresh_button.isEnabled()
    assert page.activity.summary.text().startswith("15 starred repositories · last synced ")


def test_without_a_token_the_page_points_to_settings(qtbot: QtBot, context: AppContext) -> None:
    page = _shown_page(qtbot, context)
    assert page.stack.currentWidget() is page.empty_view
    assert page.empty.text().startswith(NO_TOKEN)
    assert "GH_TOKEN" in page.empty.text()  # every way that works here
    assert not page.refresh_button.isEnabled()
    assert not page.language.isEnabled()
    assert page.empty_button.text() == "Open Settings…"
    with qtbot.waitSignal(page.settings_requested, timeout=1_000):
        qtbot.mouseClick(page.empty_button, Qt.MouseButton.LeftButton)


@pytest.mark.qt_log_ignore("propagateSizeHints", "systemTrayWindowChanged", "does not support raise")
def test_the_window_opens_settings_for_the_stars_page(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("stars")
    page = window.page("stars")
    assert isinstance(page, StarsPage)
    qtbot.waitUntil(lambda: page.snapshot is not None, timeout=5_000)
    shown = close_next_modal()
    qtbot.mouseClick(page.empty_button, Qt.MouseButton.LeftButton)  # returns once the dialog is closed
    assert len(shown) == 1
    assert isinstance(shown[0], SettingsDialog)


def test_how_the_status_lines_word_things(app: SanApp) -> None:
    job = app.stars.request_sync("https://api.github.com")
    later = (datetime.now(UTC) + timedelta(minutes=5)).astimezone()
    waiting = replace(job, run_after=later, error_message="TransientError: Cannot reach https://api.github.com")
    now = activity(waiting, None, None)
    assert now.busy
    assert now.text == f"Waiting until {later:%H:%M} to fetch your stars again (Cannot reach https://api.github.com)"
    assert activity(replace(job, status=JobStatus.PROCESSING), None, 3).text == f"{FETCHING} page 3"
    failed = replace(
        job,
        id=new_id(),  # made after the sync (a ranking follows its sync)
        job_type=JobType.GITHUB_STAR_RECOMMENDATION,
        status=JobStatus.FAILED,
        error_message="TransientError: the AI server did not answer",
    )
    error = failure_text(failed)
    assert error.startswith("<b>Could not rank your stars:</b> the AI server did not answer<br>")
    assert "AI provider" in error
    assert activity(replace(job, status=JobStatus.COMPLETED), failed, None).error == error
    # a sync whose first page had not changed (304) still counts as the last sync
    first, second = datetime(2026, 3, 1, 9, 0, tzinfo=UTC), datetime(2026, 3, 2, 17, 30, tzinfo=UTC)
    done = replace(job, status=JobStatus.COMPLETED, finished_at=second)
    assert (
        summary_text(StarsStatus(1, first, None), done)
        == f"1 starred repository · last synced {second.astimezone():%Y-%m-%d %H:%M}"
    )
    assert summary_text(StarsStatus(0, None, None)) == "Not synced yet."
    assert [compact_count(n) for n in (7, 999, 1000, 1234, 45_600, 1_300_000)] == [
        "7",
        "999",
        "1k",
        "1.2k",
        "46k",
        "1.3M",
    ]
