"""The Inbox: live analysis state, Retry for a failed analysis, delete with undo; a link whose page could not be
fetched says why and is fetched again or carded from its address."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import JOB_POOLS, ErrorKind, JobStatus, JobType, SourceType
from san_desktop.core.errors import PermanentError
from san_desktop.core.settings import AISettings
from san_desktop.jobs.processors import registry_for
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.queue.records import Classification, JobEvent
from san_desktop.services.scrap_info import ScrapInfo
from san_desktop.services.secrets import AI_API_KEY, set_secret
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import tone
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.inbox.scrap_states import refine_text
from san_desktop.ui.inbox.scrap_table import FAILED_TONE, ScrapTableModel
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from tests.support.openai_server import fake_openai_server


def _status(status: JobStatus) -> Callable[[JobEvent], bool]:
    return lambda event: event.job.job_type is JobType.CARD_ANALYSIS and event.new_status is status


NOT_FOUND = "The page was not found (HTTP 404)."
TOOLTIP, FOREGROUND = Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole


def _link_whose_fetch_failed(app: SanApp) -> str:
    """A scrapped link whose PAGE_FETCH job failed for good, written through the queue (no page is ever
    downloaded in these tests: no PAGE_FETCH processor is registered); the scrap's id."""
    scrap_id = app.capture_url("https://example.invalid/x").value.scrap_id
    claim = app.queue.claim_next(app.backend.require_session(), JOB_POOLS[JobType.PAGE_FETCH], {JobType.PAGE_FETCH})
    assert claim is not None
    assert claim.job.target_id == scrap_id
    reason = PermanentError(NOT_FOUND)
    reason.__cause__ = OSError("the server said 404")
    failed = app.queue.fail(claim, reason, Classification(ErrorKind.PERMANENT))
    assert failed is not None
    assert failed.status is JobStatus.FAILED
    return scrap_id


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
    assert page.model.data(page.model.index(0, 3)) == "Analysis failed: The AI answer made no sense"
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


def test_undo_delete_goes_once_something_newer_happened(qtbot: QtBot, window: MainWindow) -> None:
    """Issue 24: "Undo delete" stayed after a new scrap (and for good). The offer lasts as long as the
    "Deleted: …" message: a new scrap, another message or the message's time ends it."""
    page = window.inbox
    window.show_page("inbox")

    def scrap(text: str) -> str:
        mime = QMimeData()
        mime.setText(text)
        with qtbot.waitSignal(window.capture.captured, timeout=5_000) as captured:
            window.capture.scrap_mime(mime)
        return str(captured.args[0].result.scrap_id)

    first = scrap("A first scrap, deleted soon after.")
    qtbot.waitUntil(lambda: page.select_scrap(first), timeout=5_000)
    page.delete_button.click()
    qtbot.waitUntil(lambda: not page.undo_button.isHidden(), timeout=5_000)
    second = scrap("A second scrap, scrapped after the delete.")
    qtbot.waitUntil(lambda: page.undo_button.isHidden(), timeout=5_000)  # stale: the news is the new scrap
    assert "Scrapped" in page.message.text()

    qtbot.waitUntil(lambda: page.select_scrap(second), timeout=5_000)
    page.delete_button.click()
    qtbot.waitUntil(lambda: not page.undo_button.isHidden(), timeout=5_000)
    page._message_timer.setInterval(1)  # the "Deleted: …" message gives way to the hint
    page._message_timer.start()
    qtbot.waitUntil(lambda: page.message.text() == page.hint, timeout=5_000)
    assert page.undo_button.isHidden()


def test_a_link_whose_page_could_not_be_fetched_says_why_and_can_be_carded_from_its_address(
    qtbot: QtBot, context: AppContext, registry: ProcessorRegistry
) -> None:
    scrap_id = _link_whose_fetch_failed(context.app)
    analyse = registry_for(context.app).get(JobType.CARD_ANALYSIS)  # the product's, on the embedded provider
    assert analyse is not None
    registry.register(JobType.CARD_ANALYSIS, analyse)
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.select_scrap(scrap_id)
    assert page.model.data(page.model.index(0, 1)) == "https://example.invalid/x"  # no title: the address
    card = page.model.index(0, 3)
    assert page.model.data(card) == f"Page not fetched: {NOT_FOUND}"
    assert NOT_FOUND in page.message.text()  # the whole reason, where there is room for it
    tooltip = page.model.data(card, TOOLTIP)
    assert NOT_FOUND in tooltip
    assert "the server said 404" in tooltip
    assert page.model.data(card, FOREGROUND) == tone(FAILED_TONE)
    assert not page.retry_fetch_button.isHidden()
    assert not page.link_card_button.isHidden()
    assert page.retry_button.isHidden()  # no analysis was asked for: nothing to retry
    assert page.retry_refine_button.isHidden()

    with qtbot.waitSignal(context.runner.sweep_finished, timeout=10_000):
        context.runner.start()
    with qtbot.waitSignal(context.runner.job_changed, check_params_cb=_status(JobStatus.COMPLETED), timeout=30_000):
        page.link_card_button.click()

    def shows_card() -> bool:
        info = page.model.row_at(0)
        return info is not None and info.card_id is not None

    qtbot.waitUntil(shows_card, timeout=5_000)
    info = page.model.row_at(0)
    assert info is not None
    assert info.card_title
    assert page.model.data(card) == info.card_title
    assert page.link_card_button.isHidden()
    assert not page.retry_fetch_button.isHidden()  # the page may still be fetched later


def test_retry_fetch_asks_for_the_page_again(qtbot: QtBot, context: AppContext) -> None:
    scrap_id = _link_whose_fetch_failed(context.app)
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.select_scrap(scrap_id)
    assert not page.retry_fetch_button.isHidden()
    info = page.selected_scrap()
    assert info is not None
    assert info.fetch_job_id is not None
    fetch_job_id = info.fetch_job_id

    page.retry_fetch_button.click()

    def waits_for_the_page() -> bool:
        info = page.model.row_at(0)
        return info is not None and info.fetch_status is JobStatus.PENDING

    qtbot.waitUntil(waits_for_the_page, timeout=5_000)
    assert context.app.queue.get(fetch_job_id).status is JobStatus.PENDING
    assert page.model.data(page.model.index(0, 3)) == "Waiting to fetch the page…"
    assert page.model.data(page.model.index(0, 3), FOREGROUND) is None  # no longer a failure
    assert page.retry_fetch_button.isHidden()
    assert page.link_card_button.isHidden()


def test_a_link_is_named_by_its_title_and_says_its_page_is_on_the_way(qtbot: QtBot, context: AppContext) -> None:
    app = context.app
    app.capture_url("https://example.invalid/raft", "Raft, explained")
    page = InboxPage(context)
    qtbot.addWidget(page)
    assert page.model.data(page.model.index(0, 1)) == "Raft, explained"
    assert "https://example.invalid/raft" in page.model.data(page.model.index(0, 1), TOOLTIP)
    assert page.model.data(page.model.index(0, 3)) == "Waiting to fetch the page…"

    # a download under way (claimed here: no page is fetched in these tests)
    claim = app.queue.claim_next(app.backend.require_session(), JOB_POOLS[JobType.PAGE_FETCH], {JobType.PAGE_FETCH})
    assert claim is not None
    qtbot.waitUntil(lambda: page.model.data(page.model.index(0, 3)) == "Fetching the page…", timeout=5_000)
    assert page.retry_fetch_button.isHidden()
    assert page.link_card_button.isHidden()


def test_the_cleaned_text_column_says_what_it_shows() -> None:
    """Issue 24: "Refined" was an unclear column name (refined how? what is?)."""
    model = ScrapTableModel.__new__(ScrapTableModel)  # (the header and texts need no data)
    horizontal = Qt.Orientation.Horizontal
    assert ScrapTableModel.headerData(model, 4, horizontal) == "Cleaned-up text"
    assert "copy of the scrap's text" in ScrapTableModel.headerData(model, 4, horizontal, TOOLTIP)
    info = ScrapInfo(
        "s1", SourceType.TEXT, None, "text", False, datetime.now(UTC), False, None, None, None, None, None,
        JobStatus.COMPLETED,
    )  # fmt: skip
    assert refine_text(info) == "Not needed"  # the text was clean already: no second copy
    assert refine_text(replace(info, refined=True)) == "Ready"
    assert refine_text(replace(info, refine_status=JobStatus.PROCESSING)) == "Cleaning up…"
    assert refine_text(replace(info, refine_status=None)) == "—"


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_after_switching_providers_no_card_stays_red_with_the_old_servers_error(
    qtbot: QtBot, live_context: AppContext
) -> None:
    """Issue 38, item 15: once a server answering 500 had failed a scrap's analysis and clean-up for good,
    switching to another provider left them failed: the cards made since (Retry) kept a red row with the old
    HTTP 500 in its tooltip. The work the old server failed runs again with the new settings."""
    context = live_context
    with fake_openai_server() as server:
        server.behaviour = "500"
        set_secret(AI_API_KEY, "sk-test-0123456789abcdef")
        ai = AISettings(provider="openai", base_url=server.url, chat_model="gpt-test", embedding_model="embed-test")
        context.app.save_settings(replace(context.settings, ai=ai))
        page = InboxPage(context)
        qtbot.addWidget(page)
        with qtbot.waitSignal(context.runner.sweep_finished, timeout=10_000):
            context.start(poll_ms=100)
        scraps = [context.app.capture_text(f"SQLite WAL note number {n}: readers go on.").value for n in range(2)]
        jobs = [job for scrap in scraps for job in (scrap.analysis_job_id, scrap.refine_job_id) if job]
        assert len(jobs) == 4
        qtbot.waitUntil(
            lambda: {context.app.queue.get(job).status for job in jobs} == {JobStatus.FAILED}, timeout=60_000
        )

        def rows() -> list[tuple[str, bool, str]]:
            """Each row's Card and Cleaned-up cells: (text, shown red, tooltip)."""
            model = page.model
            return [
                (
                    model.data(model.index(row, column)),
                    model.data(model.index(row, column), FOREGROUND) == tone(FAILED_TONE),
                    model.data(model.index(row, column), TOOLTIP) or "",
                )
                for row in range(model.rowCount())
                for column in (3, 4)
            ]

        qtbot.waitUntil(lambda: len(rows()) == 4 and all(red and "HTTP 500" in tip for _, red, tip in rows()))

        dialog = SettingsDialog(context)
        qtbot.addWidget(dialog)
        dialog.provider.setCurrentIndex(dialog.provider.findData("local"))
        with qtbot.waitSignal(dialog.accepted, timeout=5_000):
            dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]

        def settled() -> bool:
            infos = [page.model.row_at(row) for row in range(page.model.rowCount())]
            return all(info is not None and info.card_title for info in infos) and not any(
                red or "500" in tip for _, red, tip in rows()
            )

        qtbot.waitUntil(settled, timeout=60_000)
    assert {context.app.queue.get(job).status for job in jobs} == {JobStatus.COMPLETED}
