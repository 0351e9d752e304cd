"""Every window and dialog of ``san_desktop.ui``, opened on a 1366×768 screen: all its buttons lie on it.

Not collected by a plain run (its name is not ``test_*``): ``test_screen_fit.py`` runs it in a pytest of its
own, whose QApplication is made on that screen (Qt's offscreen platform takes the screens from a file; a
QApplication is made once per process, so the suite's own 800×800 one cannot be changed). The same test
checks that the table below names every window, dialog and widget class of the package.

OPENERS: how to open each top-level window or dialog, as the window does (through ``MainWindow`` where it
has a way). PARTS: the widgets that always lie inside a window of OPENERS (a page, a bar, a table), with that
window: they are checked there. A class in neither fails the test, so a window added later is not forgotten.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.ui.cards.edit_dialog import CardEditDialog
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import EmptyState, StateStack
from san_desktop.ui.common.folder_dialog import FolderPathDialog
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.failures import FailureGroupsView
from san_desktop.ui.jobs.filters import JobFilterBar
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.jobs.pools import PoolBar
from san_desktop.ui.jobs.views import JobDetails, JobTable
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.quizzes.card import QuizCard
from san_desktop.ui.quizzes.edit_dialog import QuizEditDialog
from san_desktop.ui.quizzes.nothing_due import NothingDue
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.settings.browser_section import BrowserSection
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.stars.activity import StarsActivity
from san_desktop.ui.stars.page import StarsPage
from san_desktop.ui.stars.table import StarsTable
from san_desktop.ui.til.commit_tab import CommitTab
from san_desktop.ui.til.page import TilPage
from san_desktop.ui.til.review import TilReviewWindow
from san_desktop.ui.transfer.export_dialog import ExportDialog
from san_desktop.ui.transfer.import_dialog import ImportDialog
from san_desktop.ui.trash.page import TrashPage
from san_desktop.ui.window.about_dialog import AboutDialog
from san_desktop.ui.window.banner import Banner
from san_desktop.ui.window.navigation import NavigationList
from san_desktop.ui.window.shortcuts_dialog import ShortcutsDialog
from san_desktop.ui.window.watch_indicator import WatchIndicator
from tests.support.til import TEXTS, cards_of, finished_til, quizzes_of_today

SCREEN = QRect(0, 0, 1366, 768)

Opener = Callable[[MainWindow, AppContext], QWidget]


def _card_editor(window: MainWindow, context: AppContext) -> QWidget:
    cards_of(context.app, TEXTS)
    card = context.app.cards.list_cards()[0]
    return CardEditDialog(context, card, {}, [], window)


def _quiz_editor(window: MainWindow, context: AppContext) -> QWidget:
    quizzes_of_today(context.app, TEXTS)
    return QuizEditDialog(context, context.app.quizzes.due()[0], window)


def _til_review(window: MainWindow, context: AppContext) -> QWidget:
    return TilReviewWindow(context, finished_til(context.app), screen=window.screen())


OPENERS: dict[type[QWidget], Opener] = {
    MainWindow: lambda window, _context: window,
    SettingsDialog: lambda window, _context: window.make_settings_dialog(),
    AboutDialog: lambda window, _context: window.make_about_dialog(),
    ShortcutsDialog: lambda window, _context: window.make_shortcuts_dialog(),
    FolderPathDialog: lambda window, context: FolderPathDialog(context.app.data_dir, window),
    ImportDialog: lambda window, _context: window.imports.open_dialog(),
    ExportDialog: lambda window, _context: window.imports.open_export_dialog(),
    CardEditDialog: _card_editor,
    QuizEditDialog: _quiz_editor,
    TilReviewWindow: _til_review,
}

PARTS: dict[type[QWidget], type[QWidget]] = {
    InboxPage: MainWindow,
    CardsPage: MainWindow,
    TilPage: MainWindow,
    QuizzesPage: MainWindow,
    QuizCard: MainWindow,
    NothingDue: MainWindow,
    StarsPage: MainWindow,
    StarsTable: MainWindow,
    StarsActivity: MainWindow,
    JobsPage: MainWindow,
    JobFilterBar: MainWindow,
    JobTable: MainWindow,
    JobDetails: MainWindow,
    PoolBar: MainWindow,
    FailureGroupsView: MainWindow,
    TrashPage: MainWindow,
    EmptyState: MainWindow,
    StateStack: MainWindow,
    Banner: MainWindow,
    NavigationList: MainWindow,
    WatchIndicator: MainWindow,
    BrowserSection: SettingsDialog,
    CommitTab: TilReviewWindow,
}


def name_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.fixture(scope="session")
def qapp_args(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The QApplication of this run is made on one 1366×768 screen."""
    screens = tmp_path_factory.mktemp("screens") / "screens.json"
    shape = {"name": "laptop", "x": 0, "y": 0, "width": SCREEN.width(), "height": SCREEN.height(), "dpr": 1}
    screens.write_text(json.dumps({"screens": [shape]}), encoding="utf-8")
    return ["san-screen-fit", "-platform", f"offscreen:configfile={screens}"]


def off_screen_buttons(widget: QWidget, free: QRect) -> list[str]:
    """The visible buttons of ``widget`` that do not lie whole on ``free`` (global coordinates) and inside the
    window. A button in a scroll area counts where its scroll area's viewport is: scrolling reaches it."""
    window = widget.window()
    inside = QRect(window.mapToGlobal(QPoint(0, 0)), window.size())
    found = []
    for button in widget.findChildren(QAbstractButton):
        if not button.isVisible():
            continue
        shown: QWidget = button
        parent = button.parentWidget()
        while parent is not None and parent is not window:
            scroller = parent.parentWidget()
            if isinstance(scroller, QAbstractScrollArea) and scroller.viewport() is parent:
                shown = parent
            parent = scroller
        rect = QRect(shown.mapToGlobal(QPoint(0, 0)), shown.size())
        if not (free.contains(rect) and inside.contains(rect)):
            found.append(f"{button.text() or button.toolTip() or button.objectName()!r} at {rect.getRect()}")
    return found


def _settled(qtbot: QtBot, context: AppContext) -> None:
    """What the window reads after it is shown (and may grow by) has arrived."""
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=20_000)


@pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform has no window manager to tell
@pytest.mark.parametrize("cls", list(OPENERS), ids=name_of)
def test_its_buttons_lie_on_the_screen(
    cls: type[QWidget], qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    assert window.screen().availableGeometry() == SCREEN, "run by test_screen_fit.py, on its own screen"
    opened = OPENERS[cls](window, live_context)
    assert type(opened) is cls
    if opened is not window:
        qtbot.addWidget(opened)
        opened.show()
    qtbot.waitExposed(opened)
    _settled(qtbot, live_context)
    free = opened.screen().availableGeometry()
    assert free.contains(opened.frameGeometry()), f"{name_of(cls)} at {opened.frameGeometry().getRect()}"
    if opened is window:  # each page in turn: their buttons show only while they do
        for index in range(window.pages.count()):
            window.pages.setCurrentIndex(index)
            _settled(qtbot, live_context)
            page = window.pages.widget(index)
            assert off_screen_buttons(window, free) == [], type(page).__name__
    else:
        assert off_screen_buttons(opened, free) == []
