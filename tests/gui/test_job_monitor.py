"""The job monitor finished (issue 13): filters with counts, bulk retry in one batch, failure groups,
the pools' pause and countdown, and the window's coalesced notifications."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.settings import GitHubSettings, JobSettings
from san_desktop.db.models import AsyncJob
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.runner import JobRunner, PoolState
from san_desktop.queue.monitor import JobFilter
from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.window.tray import Tray
from tests.support.git_repo import user_repository
from tests.support.jobs import RecordingProcessor, fast_settings, insert_jobs
from tests.support.til import finished_til


@pytest.fixture
def job_settings() -> JobSettings:
    return fast_settings(breaker_cooldown_seconds=30.0, breaker_max_cooldown_seconds=60.0)


@pytest.fixture
def asked() -> list[str]:
    """What the page asked before a bulk action (each answered yes)."""
    return []


@pytest.fixture
def page(qtbot: QtBot, context: AppContext, asked: list[str]) -> JobsPage:
    def confirm(text: str) -> bool:
        asked.append(text)
        return True

    shown = JobsPage(context, confirm=confirm)
    qtbot.addWidget(shown)
    return shown


def _rows(page: JobsPage) -> list[JobEvent | object]:
    return [page.model.job_at(row) for row in range(page.model.rowCount())]


def _statuses(queue: JobStore, ids: Iterable[str]) -> set[JobStatus]:
    return {queue.get(job_id).status for job_id in ids}


def _count_announcements(queue: JobStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    batches: list[int] = []
    original = queue.announce

    def announce(events: Iterable[JobEvent]) -> None:
        listed = list(events)
        batches.append(len(listed))
        original(listed)

    monkeypatch.setattr(queue, "announce", announce)
    return batches


def test_filter_by_status_and_type_then_retry_everything_matching_in_one_batch(
    qtbot: QtBot, page: JobsPage, queue: JobStore, monkeypatch: pytest.MonkeyPatch, asked: list[str]
) -> None:
    cards = insert_jobs(queue, 30)
    tils = insert_jobs(queue, 5, job_type=JobType.TIL_GENERATION, target=lambda n: f"day-{n}")
    insert_jobs(queue, 10, status=JobStatus.COMPLETED, error=None, target=lambda n: f"done-{n}")
    page.refresh_button.click()  # written behind the page's back: no event announced them
    qtbot.waitUntil(lambda: page.model.rowCount() == 45, timeout=5_000)

    page.filters.status_buttons["Failed"].click()
    qtbot.waitUntil(lambda: page.model.rowCount() == 35, timeout=5_000)
    qtbot.waitUntil(lambda: page.filters.status_buttons["Failed"].text() == "Failed (35)", timeout=5_000)
    assert page.filters.status_buttons["Completed"].text() == "Completed (10)"
    page.filters.type_combo.setCurrentIndex(page.filters.type_combo.findData(JobType.CARD_ANALYSIS))
    qtbot.waitUntil(lambda: page.model.rowCount() == 30, timeout=5_000)
    assert {job.job_type for job in page.model.loaded_rows()} == {JobType.CARD_ANALYSIS}
    qtbot.waitUntil(lambda: page.filters.status_buttons["All"].text() == "All (40)", timeout=5_000)
    assert page.filters.status_buttons["Completed"].text() == "Completed (10)"  # card analyses too

    batches = _count_announcements(queue, monkeypatch)
    page.retry_matching_button.click()
    qtbot.waitUntil(lambda: "30 job(s) queued again" in page.message_label.text(), timeout=10_000)

    assert asked == ["Run 30 failed or cancelled jobs that match the filter again?"]
    assert batches == [30]  # one transaction, announced once
    assert _statuses(queue, cards) == {JobStatus.PENDING}
    assert _statuses(queue, tils) == {JobStatus.FAILED}  # not matched by the filter
    qtbot.waitUntil(lambda: {job.status for job in page.model.loaded_rows()} == {JobStatus.PENDING}, timeout=5_000)
    qtbot.waitUntil(lambda: page.filters.status_buttons["Waiting"].text() == "Waiting (30)", timeout=5_000)


def test_a_multi_selection_is_retried_and_cancelled_together(qtbot: QtBot, page: JobsPage, queue: JobStore) -> None:
    failed = insert_jobs(queue, 4)
    page.refresh_button.click()
    qtbot.waitUntil(lambda: page.model.rowCount() == 4, timeout=5_000)
    page.table.selectAll()
    assert page.retry_button.isEnabled()
    assert "4 jobs selected" in page.details.toPlainText()
    page.retry_button.click()
    qtbot.waitUntil(lambda: _statuses(queue, failed) == {JobStatus.PENDING}, timeout=5_000)
    qtbot.waitUntil(lambda: page.cancel_button.isEnabled(), timeout=5_000)  # the rows updated live

    page.cancel_button.click()
    qtbot.waitUntil(lambda: _statuses(queue, failed) == {JobStatus.CANCELLED}, timeout=5_000)


def test_a_group_of_failures_is_retried_from_its_group_row(qtbot: QtBot, page: JobsPage, queue: JobStore) -> None:
    timeouts = insert_jobs(
        queue, 12, error=lambda n: f"ReadTimeout: no answer from http://127.0.0.1:{8000 + n} in 30 s"
    )
    refused = insert_jobs(queue, 3, error="PermanentError: the model refused", target=lambda n: f"other-{n}")
    page.tabs.setCurrentWidget(page.failures)
    qtbot.waitUntil(lambda: [g.count for g in page.failures.groups] == [12, 3], timeout=5_000)
    assert page.failures.summary.text() == "15 failed job(s) in 2 group(s)"

    page.failures.table.selectRow(0)
    assert "12 job(s) failed like this" in page.failures.example.toPlainText()
    page.failures.retry_button.click()

    qtbot.waitUntil(lambda: _statuses(queue, timeouts) == {JobStatus.PENDING}, timeout=5_000)
    assert _statuses(queue, refused) == {JobStatus.FAILED}
    qtbot.waitUntil(lambda: [g.count for g in page.failures.groups] == [3], timeout=5_000)


def test_failure_groups_name_the_jobs_as_the_list_does(qtbot: QtBot, page: JobsPage, queue: JobStore) -> None:
    """Issue 24: re-embedding jobs (the embedding model changed) were "Card analysis" in Failures by error
    while the list called them "Card re-embedding"."""
    reembed = dump_payload(CardAnalysisPayload(embed_only=True))
    insert_jobs(queue, 2, error="The embedding server failed with 500 errors", payload=reembed)
    insert_jobs(queue, 1, error="The AI answer made no sense", target=lambda n: f"other-{n}")
    page.refresh_button.click()  # written behind the page's back: no event announced them
    qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=5_000)
    listed = {page.model.data(page.model.index(row, 0)) for row in range(3)}
    assert listed == {"Card re-embedding", "Card analysis"}
    page.tabs.setCurrentWidget(page.failures)
    qtbot.waitUntil(lambda: len(page.failures.groups) == 2, timeout=5_000)
    named = {
        page.failures.table.item(row, 4).text(): page.failures.table.item(row, 1).text()  # type: ignore[union-attr]
        for row in range(2)
    }
    assert named == {
        "The embedding server failed with # errors": "Card re-embedding",
        "The AI answer made no sense": "Card analysis",
    }


def test_failure_groups_say_the_http_status(qtbot: QtBot, page: JobsPage, queue: JobStore) -> None:
    """Issue 38, item 15: the groups read "HTTP # Internal Server Error from <url>"."""
    server = "HTTP {code} {reason} from http://127.0.0.1:{port}/v1/chat/completions: The server had an error"
    insert_jobs(queue, 3, error=lambda n: server.format(code=500, reason="Internal Server Error", port=8000 + n))
    insert_jobs(queue, 1, error=server.format(code=503, reason="Service Unavailable", port=9000), target=str)
    page.refresh_button.click()
    page.tabs.setCurrentWidget(page.failures)
    qtbot.waitUntil(lambda: len(page.failures.groups) == 2, timeout=5_000)
    shown = {
        page.failures.table.item(row, 4).text(): page.failures.table.item(row, 0).text()  # type: ignore[union-attr]
        for row in range(2)
    }
    assert shown == {
        "HTTP 500 Internal Server Error from <url>: The server had an error": "3",
        "HTTP 503 Service Unavailable from <url>: The server had an error": "1",
    }


def test_a_commit_to_a_local_repository_is_not_called_one_to_github(
    qtbot: QtBot, page: JobsPage, app: SanApp, tmp_path: Path
) -> None:
    """Issue 38, item 15: the list and the failure groups called it "TIL commit to GitHub"."""
    notes = user_repository(tmp_path / "notes")
    app.save_settings(replace(app.settings, github=GitHubSettings(target="local", local_repository=str(notes))))
    day = finished_til(app)
    app.commit_til(day)
    page.show_filter(JobFilter(job_types=frozenset({JobType.TIL_GITHUB_COMMIT})))
    qtbot.waitUntil(lambda: page.model.rowCount() == 1, timeout=5_000)
    assert page.model.data(page.model.index(0, 0)) == "TIL commit"
    qtbot.waitUntil(lambda: page.model.data(page.model.index(0, 1)) == f"TIL of {day} to {notes}", timeout=5_000)


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_a_pool_paused_by_failures_counts_down_and_try_now_lets_it_run(
    qtbot: QtBot, page: JobsPage, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore
) -> None:
    healthy = threading.Event()

    def server(_context: JobContext) -> None:
        if not healthy.is_set():
            raise TimeoutError("the AI server did not answer in time")

    registry.register(JobType.CARD_ANALYSIS, RecordingProcessor(server))
    page.show()  # the pool bar follows the pools while it is shown
    with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
        runner.start()
    jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}", max_attempts=100).id for n in range(3)]
    qtbot.waitUntil(lambda: runner.pool_status(JobPool.AI).state is PoolState.PAUSED_BY_BREAKER, timeout=10_000)
    qtbot.waitUntil(lambda: page.pools.try_now_button.isVisibleTo(page), timeout=5_000)
    first = page.pools.labels[JobPool.AI].text()
    # 3 failures open it; a job that was already running and fails too does not change the number told
    assert re.search(r"AI jobs: paused after 3 failures in a row; trying again in \d+ s", first)

    def seconds_left() -> int:
        return int(page.pools.labels[JobPool.AI].text().rsplit(" in ", 1)[1].split()[0])

    start = seconds_left()
    qtbot.waitUntil(lambda: seconds_left() < start, timeout=5_000)  # the countdown is live

    healthy.set()
    page.pools.try_now_button.click()
    qtbot.waitUntil(lambda: _statuses(queue, jobs) == {JobStatus.COMPLETED}, timeout=10_000)
    qtbot.waitUntil(lambda: not page.pools.try_now_button.isVisibleTo(page), timeout=5_000)


def test_pause_and_resume_change_what_runs_and_are_remembered(
    qtbot: QtBot, page: JobsPage, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore, app: SanApp
) -> None:
    processor = RecordingProcessor()
    registry.register(JobType.CARD_ANALYSIS, processor)
    with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
        runner.start()
    with qtbot.waitSignal(runner.idle, timeout=5_000):  # a poll round: workers look, find nothing
        pass
    assert runner.pool_status(JobPool.AI).state is PoolState.IDLE  # looking for work is not running one

    page.pools.pause_buttons[JobPool.AI].click()
    qtbot.waitUntil(lambda: runner.pool_status(JobPool.AI).state is PoolState.PAUSED_BY_USER, timeout=5_000)
    assert page.pools.pause_buttons[JobPool.AI].text() == "Resume"
    assert app.settings.jobs.ai_paused  # written to settings.json: the next start is paused too
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    for _round in range(3):  # poll rounds in which the paused pool starts nothing
        with qtbot.waitSignal(runner.idle, timeout=5_000):
            pass
    assert processor.count() == 0
    assert queue.get(job.id).status is JobStatus.PENDING

    page.pools.pause_buttons[JobPool.AI].click()
    qtbot.waitUntil(lambda: queue.get(job.id).status is JobStatus.COMPLETED, timeout=10_000)
    assert not app.settings.jobs.paused(JobPool.AI)
    assert page.pools.pause_buttons[JobPool.AI].text() == "Pause"


def test_a_running_multi_step_job_shows_its_step(qtbot: QtBot, page: JobsPage, runner: JobRunner) -> None:
    from san_desktop.jobs.registry import JobProgress

    (job_id,) = insert_jobs(page._app.queue, 1, status=JobStatus.PROCESSING, error=None)
    page.refresh_button.click()
    qtbot.waitUntil(lambda: page.model.rowCount() == 1, timeout=5_000)
    runner.job_progress.emit(JobProgress(job_id, JobType.TIL_GENERATION, "day", "write", 2, 4))
    assert page.model.index(0, 2).data() == "Running: write (2 of 4)"


# --- notifications ---------------------------------------------------------------------------


# The offscreen platform has no tray and raises no window: Qt warns when the window does either.
pytestmark_tray = pytest.mark.qt_log_ignore("systemTrayWindowChanged", "does not support raise")


@pytest.fixture
def tray_window(qtbot: QtBot, live_context: AppContext, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    """The main window on a platform that has a system tray."""
    monkeypatch.setattr(Tray, "available", staticmethod(lambda: True))
    main = MainWindow(live_context)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    return main


def _observe_tray(window: MainWindow) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []
    window.tray.icon.showMessage = lambda title, text, *_rest: shown.append((title, text))  # type: ignore[method-assign]
    return shown


@pytestmark_tray
def test_a_burst_of_finished_cards_gives_one_notification(qtbot: QtBot, tray_window: MainWindow, app: SanApp) -> None:
    shown = _observe_tray(tray_window)
    assert tray_window.tray.visible
    done: list[str] = []
    tray_window._runner.job_changed.connect(
        lambda e: (
            done.append(e.job_id)
            if e.job.job_type is JobType.CARD_ANALYSIS and e.new_status is JobStatus.COMPLETED
            else None
        )
    )
    for n in range(50):
        app.capture_text(f"Note {n}: SQLite keeps a write-ahead log so readers never block the writer ({n}).")
    qtbot.waitUntil(lambda: len(done) == 50, timeout=60_000)
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    qtbot.waitUntil(lambda: not tray_window.notifier.pending, timeout=10_000)

    assert shown == [("SAN Desktop", "50 cards ready")]
    assert "50 cards ready" in tray_window.notice_label.text()


@pytestmark_tray
def test_a_failure_notification_opens_the_monitor_filtered_to_failures(
    qtbot: QtBot, tray_window: MainWindow, app: SanApp
) -> None:
    shown = _observe_tray(tray_window)
    app.queue.enqueue(JobType.CARD_ANALYSIS, "a-scrap-that-does-not-exist")  # fails for good at once
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    assert shown == [("SAN Desktop: jobs failed", "1 job failed — click to open the monitor")]

    tray_window.tray.icon.messageClicked.emit()

    assert tray_window.current_page_key() == "jobs"
    assert tray_window.jobs.filters.filter.statuses == {JobStatus.FAILED}
    assert tray_window.jobs.filters.status_buttons["Failed"].isChecked()
    qtbot.waitUntil(lambda: tray_window.jobs.model.rowCount() == 1, timeout=5_000)
    assert tray_window.jobs.model.job_at(0).status is JobStatus.FAILED  # type: ignore[union-attr]


@pytestmark_tray
def test_do_not_disturb_silences_every_notification(qtbot: QtBot, tray_window: MainWindow, app: SanApp) -> None:
    from dataclasses import replace

    shown = _observe_tray(tray_window)
    quiet = replace(app.settings, notifications=replace(app.settings.notifications, do_not_disturb=True))
    app.save_settings(quiet)
    failed: list[str] = []
    tray_window._runner.job_changed.connect(
        lambda e: failed.append(e.job_id) if e.new_status is JobStatus.FAILED else None
    )
    app.queue.enqueue(JobType.CARD_ANALYSIS, "a-scrap-that-does-not-exist")
    qtbot.waitUntil(lambda: bool(failed), timeout=10_000)
    tray_window.notifier.flush()  # whatever a burst gathered is told now (nothing, here)
    assert shown == []
    assert not tray_window.notice_label.isVisible()


@pytest.mark.qt_log_ignore("does not support raise")
def test_after_a_crash_a_banner_links_to_the_resumed_jobs(qtbot: QtBot, live_context: AppContext, app: SanApp) -> None:
    # left running by a process that died: no session owns them any more
    interrupted = insert_jobs(app.queue, 3, status=JobStatus.PROCESSING, error=None, job_type=JobType.TIL_GENERATION)
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)

    assert window.banner.isVisible()
    assert "3 jobs interrupted when SAN Desktop last closed unexpectedly were resumed." in window.banner.label.text()
    window.banner.label.linkActivated.emit("show")

    assert not window.banner.isVisible()
    assert window.current_page_key() == "jobs"
    assert window.jobs.filters.filter.ids == frozenset(interrupted)
    assert window.jobs.filters.ids_chip.isVisible()
    qtbot.waitUntil(lambda: sorted(job.id for job in window.jobs.model.loaded_rows()) == sorted(interrupted))
    window.jobs.filters.ids_chip.click()  # back to every job
    assert window.jobs.filters.filter.ids == frozenset()


def test_copy_details_carries_every_attempt_without_secrets(
    qtbot: QtBot, page: JobsPage, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore
) -> None:
    from PySide6.QtWidgets import QApplication

    def leaky(_context: JobContext) -> None:
        raise ValueError("the server said no to Authorization: Bearer sk-secret1234567890")

    registry.register(JobType.CARD_ANALYSIS, RecordingProcessor(leaky))
    with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
        runner.start()
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    qtbot.waitUntil(lambda: queue.get(job.id).status is JobStatus.FAILED, timeout=10_000)
    qtbot.waitUntil(lambda: page.select_job(job.id), timeout=5_000)

    page.copy_button.click()
    qtbot.waitUntil(lambda: "copied" in page.message_label.text(), timeout=5_000)
    copied = QApplication.clipboard().text()
    assert f"Job:        {job.id}" in copied
    assert "Attempts (1):" in copied
    assert "#1 FAILED" in copied
    assert "Traceback" in copied  # the whole history, not the one-line error
    assert "sk-secret" not in copied
    assert "[redacted]" in copied


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_keyboard_delete_cancels_and_ctrl_f_finds(qtbot: QtBot, page: JobsPage, queue: JobStore) -> None:
    from PySide6.QtCore import Qt

    page.show()
    qtbot.waitExposed(page)
    kept = queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-2")  # no processor: they wait
    job = queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")
    page.refresh_button.click()
    qtbot.waitUntil(lambda: page.select_job(job.id), timeout=5_000)
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: queue.get(job.id).status is JobStatus.CANCELLED, timeout=5_000)
    qtbot.waitUntil(lambda: "cancelled" in page.message_label.text(), timeout=5_000)  # the page heard back

    assert page.select_job(kept.id)
    qtbot.keyClick(page.table, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert page.filters.text.hasFocus()
    qtbot.keyClick(page.filters.text, Qt.Key.Key_Delete)  # editing the filter never cancels a job
    assert page.retry_matching_button.isEnabled()  # disabled while an action runs: none was started
    assert queue.get(kept.id).status is JobStatus.PENDING


@pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a page it shows
def test_failures_on_screen_are_not_pruned_until_the_page_leaves_them(
    qtbot: QtBot, page: JobsPage, context: AppContext
) -> None:
    app = context.app
    job = app.queue.enqueue(JobType.CARD_ANALYSIS, "a-year-old-failure")
    with app.db.write() as session:
        session.execute(
            sa.update(AsyncJob)
            .where(AsyncJob.id == job.id)
            .values(
                status=JobStatus.FAILED, error_kind="PERMANENT", finished_at=app.queue.clock() - timedelta(days=365)
            )
        )

    def pruned() -> int:
        with app.db.write() as session:
            return app.queue.prune(session, 10)

    page.show()
    page.tabs.setCurrentWidget(page.failures)
    qtbot.waitUntil(lambda: len(page.failures.groups) == 1, timeout=5_000)
    assert pruned() == 0  # the person looks at it
    page.hide()
    page.show()
    assert pruned() == 0  # back on screen
    page.tabs.setCurrentIndex(0)
    assert pruned() == 1  # the list of jobs shows; the failure groups do not
