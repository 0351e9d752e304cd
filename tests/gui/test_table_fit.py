"""Tables whose columns fit (issue 17): the Cards table shows its Tags column at a 1024×700 window without
scrolling sideways, and a title too long for its column is cut after a whole word, with "…"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex
from PySide6.QtGui import QFont, QFontMetrics, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.ui.cards.page import TAGS, TITLE
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.table_fit import ELLIPSIS, Column, ColumnFitter, WordElideDelegate, elide_words
from san_desktop.ui.main_window import MainWindow
from tests.support.cards_page import first_read
from tests.support.til import cards_of

# Showing a top-level widget on the offscreen platform makes Qt warn about size hints it cannot pass on.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")

LONG_TITLE = "Write-ahead logging keeps readers going while a writer commits its pages"


def _cut_at_a_word(shown: str, whole: str) -> bool:
    """``shown`` is ``whole``'s first words (as written) followed by the ellipsis."""
    kept = shown.removesuffix(ELLIPSIS)
    return shown.endswith(ELLIPSIS) and whole.startswith(kept) and whole[len(kept)] in " ,;:"


def _shown_text(view: QTableView, delegate: WordElideDelegate, index: QModelIndex) -> str:
    option = QStyleOptionViewItem()
    option.initFrom(view.viewport())
    option.rect = view.visualRect(index)
    return delegate.shown_text(option, index)


def test_the_cards_tags_column_is_visible_at_1024_by_700(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    cards_of(
        app,
        [
            "SQLite WAL mode lets readers continue while a writer commits to the database.",
            "React hooks: useEffect runs after render and its cleanup runs before the next effect.",
        ],
    )
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.resize(1024, 700)
    window.show_page("cards")
    first_read(qtbot, window.cards)
    table = window.cards.table
    header = table.horizontalHeader()

    def tags_fit() -> bool:
        right = header.sectionViewportPosition(TAGS) + header.sectionSize(TAGS)
        return window.size().width() == 1024 and right <= table.viewport().width()

    qtbot.waitUntil(tags_fit, timeout=5_000)
    assert not table.horizontalScrollBar().isVisible()  # nothing hidden to the right
    assert header.sectionViewportPosition(TAGS) >= 0
    assert header.sectionSize(TAGS) >= 80  # a tag or two, not a sliver
    tags = window.cards.model.index(0, TAGS)
    assert table.visualRect(tags).intersects(table.viewport().rect())


def test_a_long_title_is_cut_after_a_whole_word(qtbot: QtBot) -> None:
    model = QStandardItemModel(1, 2)
    model.setItem(0, 0, QStandardItem(LONG_TITLE))
    model.setItem(0, 1, QStandardItem("tags"))
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    delegate = WordElideDelegate(view)
    view.setItemDelegateForColumn(0, delegate)
    view.resize(400, 200)
    view.show()
    qtbot.waitExposed(view)
    metrics = QFontMetrics(view.font())
    index = model.index(0, 0)

    view.setColumnWidth(0, metrics.horizontalAdvance(LONG_TITLE) // 2)
    shown = _shown_text(view, delegate, index)
    assert _cut_at_a_word(shown, LONG_TITLE), shown
    assert len(shown) > 5  # a few words, not the ellipsis alone

    view.setColumnWidth(0, metrics.horizontalAdvance(LONG_TITLE) + 40)
    assert _shown_text(view, delegate, index) == LONG_TITLE  # room enough: all of it


def test_the_cards_page_cuts_its_titles_at_words(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    cards_of(app, ["# Raft leader election and log replication\n\nThe leader replicates its log to followers."])
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("cards")
    page = first_read(qtbot, window.cards)
    card = page.model.row_at(0)
    assert card is not None
    assert " " in card.title  # more than one word, or there is nothing to show
    index = page.model.index(0, TITLE)
    metrics = QFontMetrics(page.table.font())
    page.table.setColumnWidth(TITLE, metrics.horizontalAdvance(card.title) - 10)
    shown = _shown_text(page.table, page.elide, index)
    assert _cut_at_a_word(shown, card.title), (shown, card.title)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Architecture/Design", "Architecture…"),  # a slash parts two words
        ("alpha beta gamma delta", "alpha beta…"),
        ("tags, and, more, of, them", "tags, and…"),  # no comma left before the ellipsis
    ],
)
def test_elide_words_keeps_whole_words(qtbot: QtBot, text: str, expected: str) -> None:
    metrics = QFontMetrics(QFont())
    width = metrics.horizontalAdvance(expected) + 1
    assert elide_words(text, metrics, width) == expected


def test_a_single_word_too_long_is_cut_where_it_must_be(qtbot: QtBot) -> None:
    metrics = QFontMetrics(QFont())
    word = "Supercalifragilisticexpialidocious"
    shown = elide_words(word, metrics, metrics.horizontalAdvance(word) // 2)
    assert shown.endswith(ELLIPSIS)
    assert metrics.horizontalAdvance(shown) <= metrics.horizontalAdvance(word) // 2


def test_fitted_columns_fill_the_width_exactly(qtbot: QtBot) -> None:
    model = QStandardItemModel(3, 3)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    ColumnFitter(view, {0: Column(0.6, 50), 1: Column(sample="2000-12-31"), 2: Column(0.4, 50)})
    view.show()
    qtbot.waitExposed(view)

    def filled() -> bool:
        return sum(view.columnWidth(column) for column in range(3)) == view.viewport().width()

    for width in (500, 731, 1200):
        view.resize(width, 300)
        qtbot.waitUntil(filled, timeout=2_000)
        assert not view.horizontalScrollBar().isVisible()
        assert view.columnWidth(0) > view.columnWidth(2)  # shared 60:40
