"""The Trash in the window (issue 38, items 4 and 15): Undo import asks first, saying how many of the scraps
were edited since; the Trash page lists what was deleted and restores it whole; Empty trash… says how much
goes and asks; and after an undo the status bar calls no job that was only removed "failed"."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from pytestqt.qtbot import QtBot

from san_desktop.ai.base import CardDraft
from san_desktop.ai.local import LocalProvider
from san_desktop.core.enums import JobStatus, JobType, SourceType
from san_desktop.queue.records import JobEvent
from san_desktop.services.card_edits import CardEdit
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import PageState
from san_desktop.ui.main_window import MainWindow
from tests.support.cards import all_cards
from tests.support.jobs import jobs_of

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a dialog it shows

NOTES = (
    "Raft elects a leader with randomised election timeouts.",
    "A B-tree keeps its keys sorted in pages.",
    "SQLite WAL mode lets readers continue while a writer commits.",
)


def _answering(answer: bool, questions: list[str]) -> Callable[[str], bool]:
    """A confirmation that notes each question and gives ``answer``."""

    def confirm(question: str) -> bool:
        questions.append(question)
        return answer

    return confirm


def _plan(texts: Sequence[str]) -> ImportPlan:
    items = [ImportItem(SourceType.FILE, text, f"note{n}.md") for n, text in enumerate(texts)]
    return ImportPlan(ImportKind.MARKDOWN, "/notes", items, [])


def test_undo_import_asks_saying_how_many_were_edited_and_the_trash_page_brings_it_all_back(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    app = live_context.app
    summary = app.store_import(_plan(NOTES)).value
    qtbot.waitUntil(lambda: len(all_cards(app.db)) == 3, timeout=30_000)
    edited = all_cards(app.db)[0]
    app.edit_card(edited.id, CardEdit(title="My own title"))
    qtbot.waitUntil(lambda: len(window.imports.batches) == 1, timeout=10_000)
    questions: list[str] = []
    window.imports.confirm = _answering(False, questions)
    window.imports.undo(window.imports.batches[0])
    qtbot.waitUntil(lambda: bool(questions), timeout=10_000)
    assert questions[0].startswith("Move the 3 scraps imported from /notes on ")
    assert "1 of them was edited since the import: the edits and your answers go to the Trash" in questions[0]
    assert len(app.scraps.list_scraps()) == 3  # declined: nothing moved

    window.imports.confirm = lambda _question: True
    window.imports.undo(window.imports.batches[0])
    qtbot.waitUntil(lambda: app.scraps.list_scraps() == [], timeout=10_000)

    window.show_page("trash")
    page = window.trash
    qtbot.waitUntil(lambda: page.table.rowCount() == 1, timeout=10_000)
    cells = [item.text() if (item := page.table.item(0, column)) else "" for column in range(4)]
    assert cells == ["3 scraps imported from /notes", "3", "3", "0"]
    assert "kept here for 30 days" in page.about.text()
    assert not page.restore_button.isEnabled()  # nothing chosen yet
    page.table.selectRow(0)
    assert page.restore_button.isEnabled()
    page.restore_button.click()
    qtbot.waitUntil(lambda: len(app.scraps.list_scraps()) == 3, timeout=10_000)
    qtbot.waitUntil(lambda: page.stack.kind is PageState.EMPTY, timeout=10_000)
    assert page.message.text() == "Restored 3 scraps."
    assert next(card for card in all_cards(app.db) if card.id == edited.id).title == "My own title"
    assert summary.batch_id in [batch.id for batch in app.imports.batches()]


def test_empty_trash_says_how_much_goes_asks_and_then_deletes_it_for_good(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    app = live_context.app
    for text in NOTES[:2]:
        app.delete_scrap(app.capture_text(text).value.scrap_id)  # e.g. `san scrap delete` beside the window
    window.show_page("trash")
    page = window.trash
    qtbot.waitUntil(lambda: page.table.rowCount() == 2, timeout=10_000)
    assert page.empty_button.isEnabled()
    questions: list[str] = []
    page.confirm = _answering(False, questions)
    page.empty_button.click()
    qtbot.waitUntil(lambda: bool(questions), timeout=10_000)
    assert questions[0] == (
        "Delete the 2 items (2 scraps with their cards and quizzes) in the Trash for good? This cannot be undone."
    )
    assert len(app.trash.entries()) == 2

    page.confirm = lambda _question: True
    page.empty_button.click()
    qtbot.waitUntil(lambda: page.stack.kind is PageState.EMPTY, timeout=10_000)
    assert app.trash.entries() == []
    assert page.message.text() == "Deleted 2 items (2 scraps with their cards and quizzes) for good."
    assert not page.empty_button.isEnabled()


def test_the_trash_page_and_its_buttons_fit_a_1366_by_768_screen(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    live_context.app.delete_scrap(live_context.app.capture_text(NOTES[0]).value.scrap_id)
    window.resize(1366, 768)
    window.show_page("trash")
    qtbot.waitUntil(lambda: window.trash.table.rowCount() == 1, timeout=10_000)
    assert (window.width(), window.height()) == (1366, 768)  # (nothing in it asks for more)
    inside = QRect(QPoint(0, 0), window.size())
    for button in (window.trash.restore_button, window.trash.empty_button):
        corner = button.mapTo(window, QPoint(0, 0))
        assert inside.contains(QRect(corner, button.size())), button.text()


def test_after_an_undo_no_job_that_was_only_removed_is_called_failed(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analysis of an imported note runs while its import is undone and finishes after: the delete, not the
    job, ended it (before, it failed as "Target data not found" and the status bar said "1 job failed")."""
    app = live_context.app
    started, finish, ended = threading.Event(), threading.Event(), threading.Event()
    analyse = LocalProvider.analyze_card

    def held(provider: LocalProvider, text: str, categories: Sequence[str]) -> CardDraft:
        started.set()
        finish.wait(30)
        return analyse(provider, text, categories)

    monkeypatch.setattr(LocalProvider, "analyze_card", held)
    running: list[str] = []

    def on_queue_job(event: JobEvent) -> None:  # (any thread)
        if running and event.job.id == running[0] and event.job.status in (JobStatus.CANCELLED, JobStatus.FAILED):
            ended.set()

    app.queue.add_listener(on_queue_job)
    cancel = app.queue.cancel_jobs

    def cancel_once_it_ended(job_ids: Sequence[str], *args: object, **kwargs: object) -> object:
        """The undo's cancel comes after the running job finished (what a slow undo of a large import, or a
        quick job, makes happen)."""
        ids = list(job_ids)
        if running and running[0] in ids:
            finish.set()
            ended.wait(30)
        return cancel(ids, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(app.queue, "cancel_jobs", cancel_once_it_ended)
    told: list[JobEvent] = []
    live_context.runner.job_changed.connect(told.append)

    summary = app.store_import(_plan(NOTES[:1])).value
    assert summary.batch_id is not None
    qtbot.waitUntil(started.is_set, timeout=30_000)
    [job] = jobs_of(app.queue, JobType.CARD_ANALYSIS, statuses=(JobStatus.PROCESSING,))
    running.append(job.id)
    window.notifier.flush()  # (what came before the undo)
    window.imports.confirm = lambda _question: True
    qtbot.waitUntil(lambda: len(window.imports.batches) == 1, timeout=10_000)
    window.imports.undo(window.imports.batches[0])
    finished = (JobStatus.CANCELLED, JobStatus.FAILED, JobStatus.COMPLETED)
    qtbot.waitUntil(
        lambda: any(event.job.id == job.id and event.job.status in finished for event in told), timeout=30_000
    )
    qtbot.waitUntil(lambda: "Import undone" in window.statusBar().currentMessage(), timeout=10_000)
    window.notifier.flush()
    assert "failed" not in window.notice_label.text()
    assert app.queue.get(job.id).status is JobStatus.CANCELLED
    assert [found for found in jobs_of(app.queue) if found.status is JobStatus.FAILED] == []


def test_a_card_deleted_from_the_cards_page_is_in_the_trash_and_restored_from_there(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    app = live_context.app
    scrap_id = app.capture_text(NOTES[0]).value.scrap_id
    qtbot.waitUntil(lambda: len(all_cards(app.db)) == 1, timeout=30_000)
    app.delete_scrap(scrap_id)  # the Inbox's and the Cards page's Delete
    window.show_page("trash")
    qtbot.waitUntil(lambda: window.trash.table.rowCount() == 1, timeout=10_000)
    assert window.trash.entries[0].id == scrap_id
    window.trash.table.selectRow(0)
    window.trash.restore_selected()
    qtbot.waitUntil(lambda: [s.id for s in app.scraps.list_scraps()] == [scrap_id], timeout=10_000)
    assert len(all_cards(app.db)) == 1
