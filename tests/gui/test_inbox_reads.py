"""The Inbox reads scraps on two threads: an answer that comes late (read before a delete, answered after it)
never brings a deleted scrap back, and never hides a newer one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.app import Changes
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import PageState
from san_desktop.ui.inbox.page import InboxPage


class _HeldFirst:
    """Wraps a read: its first call reads at once but answers only once released (a slow read)."""

    def __init__(self, read: Callable[..., Any]) -> None:
        self._read = read
        self._first = True
        self.read = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first, self._first = self._first, False
        try:
            return self._read(*args, **kwargs)
        finally:
            if first:
                self.read.set()
                assert self.release.wait(20)


@pytest.fixture
def page(qtbot: QtBot, context: AppContext) -> InboxPage:
    # only the reads each test starts: the news of the jobs a capture or a delete makes would read the
    # rows once more later, and hide (or not, by timing) what a late answer did
    context.hub.unfollow(context.runner)
    inbox = InboxPage(context)
    qtbot.addWidget(inbox)
    return inbox


def _delete_while_an_earlier_read_is_held(qtbot: QtBot, page: InboxPage, held: _HeldFirst, scrap_id: str) -> None:
    qtbot.waitUntil(held.read.is_set, timeout=5_000)
    assert page.select_scrap(scrap_id)
    page.delete_selected()
    qtbot.waitUntil(lambda: page.model.position_of(scrap_id) is None, timeout=5_000)
    qtbot.waitUntil(lambda: not page.undo_button.isHidden(), timeout=5_000)
    held.release.set()
    qtbot.waitUntil(lambda: not page._context.ops.busy, timeout=5_000)  # the late answer has come


def test_a_row_read_answering_after_the_delete_never_brings_the_scrap_back(
    qtbot: QtBot, context: AppContext, page: InboxPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    scrap_id = context.app.capture_text("Only this scrap, read twice on two threads.").value.scrap_id
    page.refresh_page()
    qtbot.waitUntil(lambda: page.model.position_of(scrap_id) == 0, timeout=5_000)
    held = _HeldFirst(context.app.scraps.get_many)
    monkeypatch.setattr(context.app.scraps, "get_many", held)
    context.hub.tell(Changes(scraps=frozenset({scrap_id})))  # e.g. its analysis started: its row is read
    _delete_while_an_earlier_read_is_held(qtbot, page, held, scrap_id)
    assert page.model.position_of(scrap_id) is None
    assert page.states.kind is PageState.EMPTY  # the welcome is back, and stays


def test_a_page_read_answering_after_the_delete_never_brings_the_scrap_back(
    qtbot: QtBot, context: AppContext, page: InboxPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = context.app.capture_text("An older scrap that stays.").value.scrap_id
    scrap_id = context.app.capture_text("A scrap deleted while the page is read again.").value.scrap_id
    page.refresh_page()
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=5_000)
    held = _HeldFirst(page.model.fetch_page)
    monkeypatch.setattr(page.model, "fetch_page", held)
    page.refresh_page()
    _delete_while_an_earlier_read_is_held(qtbot, page, held, scrap_id)
    assert page.model.position_of(scrap_id) is None
    assert page.model.position_of(kept) == 0


def test_a_page_read_answering_after_a_capture_never_hides_the_new_scrap(
    qtbot: QtBot, context: AppContext, page: InboxPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = context.app.capture_text("A scrap that was there before.").value.scrap_id
    page.refresh_page()
    qtbot.waitUntil(lambda: page.model.rowCount() == 1, timeout=5_000)
    held = _HeldFirst(page.model.fetch_page)
    monkeypatch.setattr(page.model, "fetch_page", held)
    page.refresh_page()
    qtbot.waitUntil(held.read.is_set, timeout=5_000)
    newer = context.app.capture_text("A scrap captured while the page was being read.").value.scrap_id
    context.hub.tell(Changes(scraps=frozenset({newer})))  # as a capture in the window does
    qtbot.waitUntil(lambda: page.model.position_of(newer) == 0, timeout=5_000)
    held.release.set()
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=5_000)
    assert page.model.position_of(newer) == 0
    assert page.model.position_of(older) == 1
