"""First run and empty lists (issue 17): on a fresh database every page says there is nothing yet and what
to do; the Inbox explains the three ways to capture with the window's real shortcut and offers, never
forces, AI and GitHub set-up; a search or filter that matches nothing says so, and clearing it brings the
rows back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import JobType
from san_desktop.core.settings import AISettings
from san_desktop.queue.monitor import JobFilter
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import EmptyState, PageState, StateStack
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.quizzes.nothing_due import NONE_YET
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.stars.page import StarsPage
from san_desktop.ui.stars.state import NO_TOKEN
from san_desktop.ui.til.page import TilPage
from tests.support.cards_page import first_read
from tests.support.til import cards_of

PageT = TypeVar("PageT", bound=QWidget)

# Showing a top-level widget on the offscreen platform makes Qt warn about size hints it cannot pass on.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")

NATIVE = QKeySequence.SequenceFormat.NativeText


@pytest.fixture(autouse=True)
def no_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A token in the environment of whoever runs the tests would count as GitHub set up."""
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)


def _shown(qtbot: QtBot, page: PageT) -> PageT:
    qtbot.addWidget(page)
    page.resize(1000, 700)
    page.show()
    qtbot.waitExposed(page)
    return page


def _states_of(page: QWidget) -> StateStack:
    states = getattr(page, "states", None) or getattr(page, "stack", None)
    assert isinstance(states, StateStack)
    return states


# --- every page, fresh -----------------------------------------------------------------------------


def _empty_says(qtbot: QtBot, page: QWidget, *words: str) -> None:
    states = _states_of(page)
    qtbot.waitUntil(lambda: states.kind is PageState.EMPTY, timeout=5_000)
    assert states.currentWidget() is states.message
    assert states.message.isVisibleTo(page)
    said = states.message.shown_text()
    for word in words:
        assert word in said


def test_a_fresh_inbox_explains_the_three_ways_to_capture(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, InboxPage(context))
    _empty_says(qtbot, page, "Nothing scrapped yet", "Drag and drop", "san scrap add", "Scrap the clipboard")
    assert page.model.rowCount() == 0
    assert not page.table.isVisibleTo(page)


def test_a_fresh_cards_page_says_cards_come_from_scraps(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, CardsPage(context))
    _empty_says(qtbot, page, "No cards yet", "Scrap something in the Inbox")


def test_a_fresh_til_page_says_how_a_til_is_made(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, TilPage(context))
    _empty_says(qtbot, page, "No days with cards yet", "press Generate")


def test_a_fresh_jobs_page_says_what_jobs_are(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, JobsPage(context))
    _empty_says(qtbot, page, "No jobs yet", "Scrap something")


def test_a_fresh_stars_page_offers_to_connect_github(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, StarsPage(context))
    _empty_says(qtbot, page, "GitHub is not connected", NO_TOKEN, "Open Settings…")


def test_a_fresh_quizzes_page_says_what_quizzes_are(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, QuizzesPage(context))
    nothing = page.nothing_due
    qtbot.waitUntil(lambda: nothing.title.text() == NONE_YET, timeout=5_000)
    assert nothing.isVisibleTo(page)
    assert isinstance(nothing, EmptyState)
    assert "made from a day's cards" in nothing.shown_text()
    assert nothing.generate_button.isVisibleTo(page)


# --- the Inbox's first run ---------------------------------------------------------------------------


def test_the_empty_inbox_names_the_shortcut_the_window_really_has(qtbot: QtBot, context: AppContext) -> None:
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.scrap_action.setShortcut(QKeySequence("Ctrl+Alt+S"))  # whatever the window binds, the page says
    window.show_page("cards")
    window.show_page("inbox")
    states = window.inbox.states
    qtbot.waitUntil(lambda: states.kind is PageState.EMPTY, timeout=5_000)
    keys = window.scrap_action.shortcut().toString(NATIVE)
    assert f"press {keys}" in states.message.steps.text()
    assert keys in window.inbox.scrap_button.toolTip()


def test_the_inbox_names_the_default_shortcut_in_a_new_window(qtbot: QtBot, context: AppContext) -> None:
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    keys = window.scrap_action.shortcut().toString(NATIVE)
    assert keys
    qtbot.waitUntil(lambda: f"press {keys}" in window.inbox.states.message.steps.text(), timeout=5_000)


def test_the_welcome_offers_ai_and_github_set_up_and_opens_nothing_itself(qtbot: QtBot, context: AppContext) -> None:
    page = _shown(qtbot, InboxPage(context))
    message = page.states.message
    qtbot.waitUntil(lambda: "ai" in message.buttons and message.buttons["ai"].isVisibleTo(page), timeout=5_000)
    assert message.buttons["github"].isVisibleTo(page)
    assert "Optional" in message.note.text()
    assert QApplication.activeModalWidget() is None  # offered, not forced

    asked: list[str] = []
    page.open_settings.connect(asked.append)
    message.buttons["ai"].click()
    message.buttons["github"].click()
    assert asked == ["ai", "github"]


def test_what_is_set_up_already_is_not_offered(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    app.save_settings(replace(app.settings, ai=AISettings(provider="openai", base_url="http://127.0.0.1:9/v1")))
    app.connections.set_github_token("ghp_alreadyThere0123456789")
    page = _shown(qtbot, InboxPage(context))
    qtbot.waitUntil(lambda: page._set_up is not None, timeout=5_000)
    message = page.states.message
    assert page.states.kind is PageState.EMPTY
    assert not any(button.isVisibleTo(page) for key, button in message.buttons.items() if key in ("ai", "github"))
    assert not message.note.isVisibleTo(page)


def test_the_welcome_gives_way_to_the_first_scrap_and_returns_when_it_is_deleted(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    page = _shown(qtbot, InboxPage(context))
    qtbot.waitUntil(lambda: page.states.kind is PageState.EMPTY, timeout=5_000)
    assert not page.message.isVisibleTo(page)  # the one-line hint is not said twice
    scrap_id = app.capture_text("The first thing worth keeping.").value.scrap_id
    page.refresh_page()
    qtbot.waitUntil(lambda: page.states.kind is PageState.CONTENT, timeout=5_000)
    assert page.message.isVisibleTo(page)
    assert page.select_scrap(scrap_id)
    page.delete_selected()
    qtbot.waitUntil(lambda: page.states.kind is PageState.EMPTY, timeout=5_000)
    assert not page.undo_button.isHidden()  # Undo stays at hand above the welcome


# --- no results --------------------------------------------------------------------------------------


def _wait_for(qtbot: QtBot, condition: Callable[[], bool]) -> None:
    qtbot.waitUntil(condition, timeout=5_000)


def test_a_card_search_that_matches_nothing_says_so_and_clear_brings_the_cards_back(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    cards_of(app, ["SQLite WAL mode lets readers continue while a writer commits to the database."])
    page = first_read(qtbot, _shown(qtbot, CardsPage(context)))
    assert page.model.rowCount() == 1
    assert page.states.kind is PageState.CONTENT

    page.search.setText("zebra crossing")
    _wait_for(qtbot, lambda: page.states.kind is PageState.NO_RESULTS)
    message = page.states.message
    assert "No card matches “zebra crossing”" in message.title.text()
    clear = message.buttons["clear"]
    assert clear.isVisibleTo(page)
    assert clear.text() == "Clear search"

    clear.click()
    _wait_for(qtbot, lambda: page.states.kind is PageState.CONTENT and page.model.rowCount() == 1)
    assert page.search.text() == ""
    assert page.table.isVisibleTo(page)


def test_a_job_filter_that_matches_nothing_says_so_and_clear_shows_every_job(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    app.queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")  # no processor runs: it waits
    page = _shown(qtbot, JobsPage(context))
    _wait_for(qtbot, lambda: page.model.rowCount() == 1 and page.states.kind is PageState.CONTENT)

    page.filters.text.setText("no such job anywhere")
    _wait_for(qtbot, lambda: page.states.kind is PageState.NO_RESULTS)
    message = page.states.message
    assert message.title.text() == "No job matches this filter"
    assert message.buttons["clear"].text() == "Clear filter"

    message.buttons["clear"].click()
    _wait_for(qtbot, lambda: page.states.kind is PageState.CONTENT and page.model.rowCount() == 1)
    assert page.filters.filter == JobFilter()
    assert page.filters.text.text() == ""


def test_a_status_that_no_job_has_is_no_results_not_empty(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    app.queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")
    page = _shown(qtbot, JobsPage(context))
    _wait_for(qtbot, lambda: page.model.rowCount() == 1)
    page.filters.status_buttons["Failed"].click()
    _wait_for(qtbot, lambda: page.states.kind is PageState.NO_RESULTS)
    page.states.message.buttons["clear"].click()
    _wait_for(qtbot, lambda: page.states.kind is PageState.CONTENT)
    assert page.filters.status_buttons["All"].isChecked()
