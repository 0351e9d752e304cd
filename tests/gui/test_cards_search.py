"""The Cards page's search finds by meaning across languages and says where each result matched."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from tests.integration.services.test_similar_meaning import ENGLISH, KOREAN
from tests.support.til import cards_of


def test_a_korean_search_lists_the_english_card_and_says_it_was_found_by_meaning(
    qtbot: QtBot, live_context: AppContext
) -> None:
    cards_of(live_context.app, [ENGLISH["isolation"], ENGLISH["docker"], KOREAN["react"]])
    page = CardsPage(live_context)
    qtbot.addWidget(page)
    qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=10_000)
    page.search.setText("트랜잭션 격리")

    def titles() -> list[str]:
        return [row.title for row in page.model.loaded_rows()]

    isolation = next(card for card in live_context.app.cards.list_cards() if "isolation" in card.summary.lower())
    qtbot.waitUntil(lambda: titles()[:1] == [isolation.title], timeout=10_000)
    tooltip = page.model.data(page.model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert tooltip.endswith("Found by meaning")


def test_the_days_whose_til_note_the_search_finds_are_links_to_the_til_page(
    qtbot: QtBot, live_context: AppContext
) -> None:
    from tests.gui.conftest import POLL_MS
    from tests.support.til import finished_til

    day = finished_til(live_context.app, [ENGLISH["isolation"], ENGLISH["docker"]])  # before the window's runner
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=POLL_MS)
    window.show_page("cards")
    window.cards.search.setText("dependencies")
    qtbot.waitUntil(lambda: window.cards.til_matches.isVisible(), timeout=10_000)
    assert f'href="{day}"' in window.cards.til_matches.text()
    window.cards.search.setText("zebra crossing")  # a search that finds no note hides the line
    qtbot.waitUntil(lambda: not window.cards.til_matches.isVisible(), timeout=10_000)
    window.cards.til_matches.linkActivated.emit(day)  # (as a click on the link does)
    assert window.current_page_key() == "til"
    qtbot.waitUntil(lambda: window.til.days.currentItem() is not None, timeout=10_000)
    assert window.til.days.currentItem().data(Qt.ItemDataRole.UserRole) == day
