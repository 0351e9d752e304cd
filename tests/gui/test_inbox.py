"""The Inbox: live analysis state, Retry for a failed analysis, delete with undo."""

from __future__ import annotations

import threading
from collections.abc import Callable

from pytestqt.qtbot import QtBot

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.errors import PermanentError
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.queue.records import JobEvent
from san_desktop.ui.context import AppContext
from san_desktop.ui.inbox_page import InboxPage


def _status(status: JobStatus) -> Callable[[JobEvent], bool]:
    return lambda event: event.job.job_type is JobType.CARD_ANALYSIS and event.new_status is status


def test_failed_analysis_shows_and_can_be_retried_from_the_inbox(
    qtbot: QtBot, context: AppContext, registry: ProcessorRegistry
) -> None:
    broken = threading.Event()
    broken.set()

    def analyse(_context: JobContext) -> None:
        if broken.is_set():
            raise PermanentError("The AI answer made no sense")

    registry.register(JobType.CARD_ANALYSIS, analyse)
    page = InboxPage(context)
    qtbot.addWidget(page)
    with qtbot.waitSignal(context.runner.sweep_finished, timeout=10_000):
        context.runner.start()
    with qtbot.waitSignal(context.runner.job_changed, check_params_cb=_status(JobStatus.FAILED), timeout=10_000):
        scrap_id = context.app.capture_text("Kafka partitions are ordered; topics are not.").value.scrap_id

    def shows_failure() -> bool:
        info = page.model.row_at(0)
        return info is not None and info.id == scrap_id and info.analysis_status is JobStatus.FAILED

    qtbot.waitUntil(shows_failure, timeout=5_000)
    assert page.select_scrap(scrap_id)
    assert page.model.data(page.model.index(0, 3)) == "Analysis failed: PermanentError: The AI answer made no sense"
    assert "no sense" in page.model.data(page.model.index(0, 3), 3)  # the tooltip carries the error
    assert not page.retry_button.isHidden()

    broken.clear()
    with qtbot.waitSignal(context.runner.job_changed, check_params_cb=_status(JobStatus.COMPLETED), timeout=10_000):
        page.retry_button.click()

    def shows_success() -> bool:
        info = page.model.row_at(0)
        return info is not None and info.analysis_status is JobStatus.COMPLETED

    qtbot.waitUntil(shows_success, timeout=5_000)
    assert page.retry_button.isHidden()


def test_delete_and_undo(qtbot: QtBot, context: AppContext) -> None:
    first = context.app.capture_text("first scrap").value.scrap_id
    second = context.app.capture_text("second scrap").value.scrap_id
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.select_scrap(first)
    page.delete_button.click()
    qtbot.waitUntil(lambda: page.model.position_of(first) is None, timeout=5_000)
    assert page.model.position_of(second) == 0
    qtbot.waitUntil(lambda: not page.undo_button.isHidden(), timeout=5_000)
    assert "Deleted" in page.message.text()
    page.undo_button.click()
    qtbot.waitUntil(lambda: page.model.position_of(first) == 1, timeout=5_000)
    assert page.undo_button.isHidden()
    assert page.message.text() == "Restored."
    page._message_timer.setInterval(1)  # a passing message gives way to the hint
    page._message_timer.start()
    qtbot.waitUntil(lambda: page.message.text() == page.hint, timeout=5_000)
