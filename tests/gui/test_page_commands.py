"""What the window's Find, Refresh and Delete call on a page (issue 17): ``focus_search`` focuses and
selects the page's search (False without one), ``refresh_page`` reads again off the GUI thread without
emptying the list first, ``delete_selected`` deletes with the page's Undo."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.lazy_model import select_key
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.stars.page import StarsPage
from san_desktop.ui.til.page import TilPage
from tests.support.cards_page import first_read
from tests.support.til import cards_of

PageT = TypeVar("PageT", bound=QWidget)

# Showing a top-level widget on the offscreen platform makes Qt warn about size hints it cannot pass on.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")

SQLITE = "SQLite WAL mode lets readers continue while a writer commits to the database."
RAFT = "Raft elects a leader; the leader replicates its log to followers."


def _active(qtbot: QtBot, page: PageT) -> PageT:
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page, timeout=5_000)  # focus goes to active windows
    return page


# --- Inbox -------------------------------------------------------------------------------------------


def test_the_inbox_has_no_search_to_focus(qtbot: QtBot, context: AppContext) -> None:
    page = _active(qtbot, InboxPage(context))
    assert page.focus_search() is False


def test_refresh_reads_the_inbox_again_keeping_its_rows_until_the_new_ones_arrive(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    first = app.capture_text("first scrap").value.scrap_id
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.model.position_of(first) == 0
    second = app.capture_text("second scrap").value.scrap_id  # behind the page's back: nothing announced

    page.refresh_page()
    assert page.model.position_of(first) == 0  # no empty moment: the query runs off the GUI thread
    qtbot.waitUntil(lambda: page.model.position_of(second) == 0, timeout=5_000)
    assert page.model.position_of(first) == 1


def test_delete_selected_deletes_the_scrap_and_undo_restores_it(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    kept = app.capture_text("kept scrap").value.scrap_id
    deleted = app.capture_text("deleted scrap").value.scrap_id
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.select_scrap(deleted)

    page.delete_selected()
    qtbot.waitUntil(lambda: page.model.position_of(deleted) is None, timeout=5_000)
    assert [info.id for info in app.scraps.list_scraps()] == [kept]
    qtbot.waitUntil(lambda: not page.undo_button.isHidden(), timeout=5_000)

    page.undo_button.click()
    qtbot.waitUntil(lambda: page.model.position_of(deleted) == 0, timeout=5_000)
    selected = page.selected_scrap()
    assert selected is not None
    assert selected.id == deleted  # selected again where it was


def test_delete_selected_without_a_selection_does_nothing(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    scrap_id = app.capture_text("a scrap").value.scrap_id
    page = InboxPage(context)
    qtbot.addWidget(page)
    page.table.clearSelection()
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=5_000)  # the page's first reads
    page.delete_selected()
    assert not context.ops.busy  # nothing was asked for
    assert page.model.position_of(scrap_id) == 0


# --- Cards -------------------------------------------------------------------------------------------


def test_focus_search_focuses_and_selects_the_card_search(qtbot: QtBot, context: AppContext) -> None:
    page = _active(qtbot, CardsPage(context))
    page.search.setText("wal")
    page.table.setFocus()
    assert page.focus_search() is True
    assert page.search.hasFocus()
    assert page.search.selectedText() == "wal"  # typing replaces it


def test_refresh_reads_the_cards_again(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    cards_of(app, [SQLITE])
    page = CardsPage(context)
    qtbot.addWidget(page)
    assert first_read(qtbot, page).model.rowCount() == 1
    cards_of(app, [RAFT])  # made behind the page's back

    page.refresh_page()
    assert page.model.rowCount() == 1  # kept until the new rows arrive
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=5_000)


def test_delete_selected_deletes_the_cards_scrap_and_undo_brings_the_card_back(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    cards_of(app, [SQLITE, RAFT])
    page = CardsPage(context)
    qtbot.addWidget(page)
    assert first_read(qtbot, page).model.rowCount() == 2
    card = page.model.row_at(0)
    assert card is not None
    assert select_key(page.table, page.model, card.id)

    page.delete_selected()
    qtbot.waitUntil(lambda: page.model.position_of(card.id) is None, timeout=5_000)
    assert card.id not in {row.id for row in app.cards.list_cards()}
    assert card.scrap_id not in {info.id for info in app.scraps.list_scraps()}  # the same delete as the Inbox's
    qtbot.waitUntil(lambda: "Undo" in page.message.text(), timeout=5_000)
    following = page.model.row_at(0)
    assert following is not None
    assert page.table.selectionModel().isRowSelected(0)  # the next card, ready for another Delete

    page.message.linkActivated.emit("undo")  # the link "Undo" clicked
    qtbot.waitUntil(lambda: page.model.position_of(card.id) == 0, timeout=5_000)
    assert card.id in {row.id for row in app.cards.list_cards()}
    qtbot.waitUntil(lambda: page.message.text() == "Restored.", timeout=5_000)
    assert page.table.selectionModel().isRowSelected(0)  # the restored card is selected again


# --- the other pages ---------------------------------------------------------------------------------


def test_the_jobs_filter_is_the_jobs_page_search(qtbot: QtBot, context: AppContext) -> None:
    page = _active(qtbot, JobsPage(context))
    page.filters.text.setText("failed")
    page.tabs.setCurrentIndex(1)
    assert page.focus_search() is True
    assert page.tabs.currentIndex() == 0
    assert page.filters.text.hasFocus()
    assert page.filters.text.selectedText() == "failed"


@pytest.mark.parametrize("page_type", [TilPage, QuizzesPage, StarsPage, JobsPage])
def test_pages_without_a_search_or_a_delete_answer_plainly(
    qtbot: QtBot, context: AppContext, page_type: Callable[[AppContext], TilPage | QuizzesPage | StarsPage | JobsPage]
) -> None:
    page = page_type(context)
    qtbot.addWidget(page)
    page.refresh_page()
    page.delete_selected()
    if page_type is not JobsPage:
        assert page.focus_search() is False
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=5_000)
