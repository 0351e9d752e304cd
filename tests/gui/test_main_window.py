from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from san_desktop import __version__
from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JobPool
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.db.models import AppSession
from san_desktop.jobs.breaker import BreakerState, BreakerStatus
from san_desktop.jobs.runner import BreakerChange, JobRunner
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.main_window import PAGES, MainWindow
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.stars.page import StarsPage
from san_desktop.ui.til.page import TilPage
from san_desktop.ui.trash.page import TrashPage
from tests.support.db import open_again


def _window(qtbot: QtBot, context: AppContext) -> MainWindow:
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_navigation_lists_every_section_and_switches_pages(
    qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext
) -> None:
    window = _window(qtbot, context)
    labels = [window.navigation.item(row).text() for row in range(window.navigation.count())]
    assert labels == ["Inbox", "Cards", "TIL", "Quizzes", "Stars", "Jobs", "Trash"]
    assert window.current_page_key() == "inbox"

    jobs_row = [key for key, _label, _description in PAGES].index("jobs")
    rect = window.navigation.visualItemRect(window.navigation.item(jobs_row))
    qtbot.mouseClick(window.navigation.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.current_page_key() == "jobs"
    assert window.pages.currentWidget() is window.page("jobs")


def test_every_page_is_built(qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext) -> None:
    window = _window(qtbot, context)
    assert isinstance(window.page("jobs"), JobsPage)
    assert isinstance(window.page("inbox"), InboxPage)
    assert isinstance(window.page("cards"), CardsPage)
    assert isinstance(window.page("til"), TilPage)
    assert isinstance(window.page("quizzes"), QuizzesPage)
    assert isinstance(window.page("stars"), StarsPage)
    assert isinstance(window.page("trash"), TrashPage)
    assert [window.navigation.item(row).toolTip() for row in range(window.navigation.count())] == [
        description for _key, _label, description in PAGES
    ]  # each page says what it is for


@pytest.mark.sqlite  # a server's library is made by whoever opens it first: no welcome of a new file here
def test_status_bar_welcomes_a_new_database(
    qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext
) -> None:
    window = _window(qtbot, context)
    assert "new database" in window.statusBar().currentMessage()
    assert str(backend.data_dir) in window.database_label.text()


def test_about_dialog_shows_version_and_data_directory(
    qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext
) -> None:
    window = _window(qtbot, context)
    dialog = window.make_about_dialog()
    qtbot.addWidget(dialog)
    assert dialog.version_label.text() == __version__
    assert dialog.data_dir_label.text() == str(backend.data_dir)
    model = dialog.model_label.text()  # the shipped model and its license, as NOTICE names them
    assert "Universal Sentence Encoder multilingual v3" in model
    assert "Apache-2.0" in model


def test_closing_the_window_ends_the_session_and_frees_the_data_directory(
    qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext
) -> None:
    window = _window(qtbot, context)
    with qtbot.waitSignal(window.shut_down, timeout=5000):
        window.close()
    assert backend.lock is not None
    assert not backend.lock.held
    with InstanceLock(backend.data_dir) as again:  # another instance may start now
        assert again.held
    # the engine was disposed; a fresh one reads the recorded end of the session
    reopened = open_again(backend.db)
    try:
        with reopened.engine.connect() as conn:
            ended = conn.execute(
                sa.select(AppSession.ended_at).where(AppSession.id == backend.require_session())
            ).scalar_one()
        assert ended is not None
    finally:
        reopened.dispose()


def test_status_bar_tells_about_a_paused_ai_pool_and_stalled_jobs(
    qtbot: QtBot, backend: Backend, runner: JobRunner, context: AppContext
) -> None:
    window = _window(qtbot, context)
    status = BreakerStatus(BreakerState.OPEN, 5, time.monotonic() + 60, 60.0)
    runner.breaker_changed.emit(BreakerChange(JobPool.AI, status))
    assert "AI jobs paused after 5 failures in a row" in window.statusBar().currentMessage()
    runner.stalled.emit(["job-1", "job-2"])
    assert "2 job(s) have been running for unusually long" in window.statusBar().currentMessage()


def test_the_first_frame_is_announced_once_when_the_window_is_painted(qtbot: QtBot, context: AppContext) -> None:
    """The entry point starts the runner, the sentence encoder and the card index on it, so that they do
    not compete with the window's first frame."""
    window = MainWindow(context)
    qtbot.addWidget(window)
    frames: list[bool] = []
    window.first_frame.connect(lambda: frames.append(window.isVisible()))
    with qtbot.waitSignal(window.first_frame, timeout=MainWindow.FIRST_FRAME_LATEST_MS // 2):
        window.show()  # announced on its paint, well before the fallback timer would
    window.repaint()
    window.show_page("cards")
    qtbot.waitUntil(lambda: window.current_page_key() == "cards")
    assert frames == [True]


def test_a_window_never_painted_still_announces_its_first_frame(qtbot: QtBot, context: AppContext) -> None:
    window = MainWindow(context)  # not shown (a start hidden in the tray): start-up work must still start
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame, timeout=MainWindow.FIRST_FRAME_LATEST_MS + 5_000):
        pass
    assert not window.isVisible()
