"""The Qt runner end to end: worker threads, signals on the GUI thread, the monitor, the breaker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from PySide6.QtCore import QCoreApplication, QThread
from pytestqt.qtbot import QtBot
from sqlalchemy.orm import Session

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.core.thread_priority import BACKGROUND_NICE
from san_desktop.jobs import runner as runner_module
from san_desktop.jobs.breaker import BreakerState
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.runner import BreakerChange, JobRunner
from san_desktop.jobs.workers import PollResult
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.recovery.sweep import sweep
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.jobs.page import JobsPage
from tests.support.db import open_again
from tests.support.jobs import RecordingProcessor, jobs_of
from tests.support.thread_priority import linux_only, thread_nice


def _start(qtbot: QtBot, runner: JobRunner) -> None:
    with qtbot.waitSignal(runner.sweep_finished, timeout=10_000):
        runner.start()


def _completed(job_id: str) -> Callable[[JobEvent], bool]:
    return lambda event: event.job_id == job_id and event.new_status is JobStatus.COMPLETED


def test_job_runs_on_a_worker_and_reports_on_the_gui_thread(
    qtbot: QtBot, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore, context: AppContext
) -> None:
    processor = RecordingProcessor()
    registry.register(JobType.CARD_ANALYSIS, processor)
    page = JobsPage(context)
    qtbot.addWidget(page)
    resets: list[bool] = []
    page.model.modelReset.connect(lambda: resets.append(True))
    received: list[tuple[JobStatus | None, JobStatus, bool]] = []
    gui_thread = QCoreApplication.instance().thread()  # type: ignore[union-attr]

    def on_changed(event: JobEvent) -> None:
        received.append((event.old_status, event.new_status, QThread.currentThread() is gui_thread))

    runner.job_changed.connect(on_changed)
    _start(qtbot, runner)

    with qtbot.waitSignal(runner.job_changed, check_params_cb=_completed_for_any, timeout=10_000) as blocker:
        job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")  # from the GUI thread
    assert blocker.args[0].job_id == job.id

    assert "MainThread" not in processor.threads()
    assert received == [
        (None, JobStatus.PENDING, True),
        (JobStatus.PENDING, JobStatus.PROCESSING, True),
        (JobStatus.PROCESSING, JobStatus.COMPLETED, True),
    ]

    # the monitor row followed the signals (through the hub, once per tick) without a reload
    def row_completed() -> bool:
        record = page.model.job_at(0)
        return record is not None and record.id == job.id and record.status is JobStatus.COMPLETED

    qtbot.waitUntil(row_completed, timeout=5_000)
    assert resets == []
    record = page.model.job_at(0)
    assert record is not None
    assert record.attempts == 1


def _status_of(page: JobsPage, job_id: str) -> JobStatus | None:
    row = page.model.row_of(job_id)
    record = page.model.job_at(row) if row is not None else None
    return record.status if record is not None else None


def _completed_for_any(event: JobEvent) -> bool:
    return event.new_status is JobStatus.COMPLETED


def test_retry_button_runs_a_failed_job_again(
    qtbot: QtBot, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore, context: AppContext
) -> None:
    fail = threading.Event()
    fail.set()

    def behaviour(_context: JobContext) -> None:
        if fail.is_set():
            raise ValueError("bad input")  # permanent: fails at once

    registry.register(JobType.CARD_ANALYSIS, RecordingProcessor(behaviour))
    page = JobsPage(context)
    qtbot.addWidget(page)
    _start(qtbot, runner)

    with qtbot.waitSignal(
        runner.job_changed, check_params_cb=lambda e: e.new_status is JobStatus.FAILED, timeout=10_000
    ):
        job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    qtbot.waitUntil(lambda: _status_of(page, job.id) is JobStatus.FAILED, timeout=5_000)
    assert page.select_job(job.id)
    assert page.retry_button.isEnabled()
    assert not page.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: "bad input" in page.details.toPlainText(), timeout=5_000)
    assert "ValueError" not in page.details.toPlainText()  # a person reads the sentence...
    assert "ValueError: bad input" in (queue.get(job.id).error_message or "")  # ...the report keeps the type

    fail.clear()
    with qtbot.waitSignal(runner.job_changed, check_params_cb=_completed(job.id), timeout=10_000):
        page.retry_button.click()

    assert queue.get(job.id).status is JobStatus.COMPLETED
    qtbot.waitUntil(lambda: _status_of(page, job.id) is JobStatus.COMPLETED, timeout=5_000)
    assert not page.retry_button.isEnabled()
    qtbot.waitUntil(lambda: page.details.toPlainText().count("#") >= 2, timeout=5_000)  # both attempts listed


def test_cancel_button_removes_a_waiting_job(
    qtbot: QtBot, runner: JobRunner, queue: JobStore, context: AppContext
) -> None:
    # no processor is registered for the type: the job waits
    page = JobsPage(context)
    qtbot.addWidget(page)
    _start(qtbot, runner)
    job = queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")
    qtbot.waitUntil(lambda: page.model.row_of(job.id) == 0, timeout=5_000)
    assert page.select_job(job.id)
    assert page.cancel_button.isEnabled()
    with qtbot.waitSignal(
        runner.job_changed, check_params_cb=lambda e: e.new_status is JobStatus.CANCELLED, timeout=5_000
    ):
        page.cancel_button.click()
    assert queue.get(job.id).status is JobStatus.CANCELLED


def test_breaker_pauses_the_ai_pool_and_resumes_after_cooldown(
    qtbot: QtBot, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore
) -> None:
    healthy = threading.Event()

    def ai_server(_context: JobContext) -> None:
        if not healthy.is_set():
            raise TimeoutError("the AI server did not answer in time")

    processor = RecordingProcessor(ai_server)
    registry.register(JobType.CARD_ANALYSIS, processor)
    changes: list[BreakerState] = []
    runner.breaker_changed.connect(lambda change: changes.append(change.status.state))
    threshold = runner.settings.breaker_failure_threshold
    threads = runner.settings.ai_pool_size
    _start(qtbot, runner)

    def opened(change: BreakerChange) -> bool:
        return change.status.state is BreakerState.OPEN

    with qtbot.waitSignal(runner.breaker_changed, check_params_cb=opened, timeout=10_000):
        jobs = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}", max_attempts=100) for n in range(20)]
    calls_when_opened = processor.count()
    assert calls_when_opened <= threshold + threads - 1
    # two more cooldowns: each lets exactly one probe through
    for _ in range(2):
        qtbot.waitSignal(runner.breaker_changed, check_params_cb=opened, timeout=10_000).wait()
    assert processor.count() <= calls_when_opened + threads - 1 + 2
    assert changes[:3] == [BreakerState.OPEN, BreakerState.HALF_OPEN, BreakerState.OPEN]

    healthy.set()
    qtbot.waitUntil(lambda: all(queue.get(job.id).status is JobStatus.COMPLETED for job in jobs), timeout=20_000)
    assert runner.breaker_status() is not None
    assert runner.breaker_status().state is BreakerState.CLOSED  # type: ignore[union-attr]
    # the signal comes from the worker that closed it, queued to this thread: it may follow the last job's end
    qtbot.waitUntil(lambda: changes[-1] is BreakerState.CLOSED, timeout=5_000)


def test_jobs_enqueued_by_another_process_are_picked_up_by_polling(
    qtbot: QtBot, backend: Backend, registry: ProcessorRegistry
) -> None:
    """Another process (the command line) shares the database but not our listeners: the default
    2-second poll must find its job."""
    settings = JobSettings()  # the real poll interval
    runner = JobRunner(JobStore(backend.db, settings), registry, backend.require_session(), settings)
    registry.register(JobType.CARD_ANALYSIS, RecordingProcessor())
    other_process = open_again(backend.db)  # its own engine, like `san` in another process
    try:
        _start(qtbot, runner)
        with qtbot.waitSignal(runner.job_changed, check_params_cb=_completed_for_any, timeout=2 * 2000 + 1000) as done:
            job = JobStore(other_process, settings).enqueue(JobType.CARD_ANALYSIS, "scrap-from-cli")
        assert done.args[0].job_id == job.id
    finally:
        runner.shutdown()
        other_process.dispose()


def test_changes_made_by_another_process_reach_the_views(
    qtbot: QtBot, runner: JobRunner, backend: Backend, context: AppContext
) -> None:
    """``san jobs cancel`` or ``san scrap add`` beside the open window: the poll announces them."""
    page = JobsPage(context)
    qtbot.addWidget(page)
    _start(qtbot, runner)
    other_process = open_again(backend.db)
    try:
        cli_queue = JobStore(other_process, runner.settings)
        with qtbot.waitSignal(runner.job_changed, check_params_cb=lambda e: e.external, timeout=5_000) as seen:
            job = cli_queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-1")  # no processor: it waits
        assert seen.args[0].job_id == job.id
        qtbot.waitUntil(lambda: page.model.row_of(job.id) == 0, timeout=5_000)
        with qtbot.waitSignal(
            runner.job_changed, check_params_cb=lambda e: e.new_status is JobStatus.CANCELLED, timeout=5_000
        ):
            cli_queue.cancel(job.id)
        qtbot.waitUntil(lambda: _status_of(page, job.id) is JobStatus.CANCELLED, timeout=5_000)
    finally:
        other_process.dispose()


def test_a_change_stamped_before_the_last_seen_one_is_still_announced(
    qtbot: QtBot, runner: JobRunner, backend: Backend, queue: JobStore
) -> None:
    """Another process stamps ``updated_at`` before it commits: its change may become visible after one
    of ours with a later stamp. The poll looks back far enough to announce it anyway (once)."""
    _start(qtbot, runner)
    with qtbot.waitSignal(runner.job_changed, timeout=5_000):
        ours = queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-ours")  # no processor: it waits
    other_process = open_again(backend.db)
    try:
        earlier = ours.updated_at - timedelta(seconds=2)
        late_commit = JobStore(other_process, runner.settings, clock=lambda: earlier)
        announced: list[str] = []
        runner.job_changed.connect(lambda event: announced.append(event.job_id) if event.external else None)
        theirs = late_commit.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "account-theirs")
        qtbot.waitUntil(lambda: theirs.id in announced, timeout=5_000)
        with qtbot.waitSignal(runner.idle, timeout=5_000):  # another poll round: not announced twice
            pass
        with qtbot.waitSignal(runner.idle, timeout=5_000):
            pass
        assert announced.count(theirs.id) == 1
        assert ours.id not in announced  # our own change came as our own event, not as news
    finally:
        other_process.dispose()


def test_a_change_the_poll_read_before_its_own_event_arrived_is_announced_once(
    qtbot: QtBot, runner: JobRunner, queue: JobStore
) -> None:
    """A bulk retry of this process on another thread: the poll (on the maintenance thread) may read its rows
    before their events reached the GUI thread; each is announced once, as this process's own."""
    _start(qtbot, runner)
    announced: list[JobEvent] = []
    runner.job_changed.connect(announced.append)
    made: list[JobRecord] = []
    writer = threading.Thread(target=lambda: made.append(queue.enqueue(JobType.GITHUB_STAR_RECOMMENDATION, "a-1")))
    writer.start()
    writer.join()
    (job,) = made
    runner._on_poll_returned(PollResult(frozenset({job.id}), [job]))  # its event still waits for this thread

    qtbot.waitUntil(lambda: any(event.job_id == job.id for event in announced), timeout=5_000)
    with qtbot.waitSignal(runner.idle, timeout=5_000):  # another poll round
        pass
    assert [(event.job_id, event.external) for event in announced if event.job_id == job.id] == [(job.id, False)]


def test_a_burst_of_events_from_workers_reaches_the_gui_thread_whole_and_in_order(
    qtbot: QtBot, runner: JobRunner, queue: JobStore
) -> None:
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    seen: list[int] = []
    runner.job_changed.connect(lambda event: seen.append(event.job.attempts))
    count = runner_module.EVENTS_PER_SLICE * 2 + 50  # more than one slice of the GUI thread's loop

    def burst() -> None:  # a worker announcing faster than the GUI thread takes them
        for n in range(count):
            runner._on_queue_event(JobEvent(replace(job, attempts=n), JobStatus.PENDING))

    worker = threading.Thread(target=burst)
    worker.start()
    worker.join(30)
    assert seen == []  # nothing crossed yet: the GUI thread has not run its loop
    qtbot.waitUntil(lambda: len(seen) == count, timeout=5_000)
    assert seen == list(range(count))


def test_quitting_during_the_start_up_sweep_stops_it_between_rounds_and_loses_nothing(
    qtbot: QtBot, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore
) -> None:
    """A library of 50,000 cards of another model gave the sweep's hooks over a minute of rounds, and
    closing the window waited 10 s for them. A shutdown now lets the round under way commit and starts
    no other; the next sweep enqueues the rest."""
    targets = ["scrap-1", "scrap-2", "scrap-3"]
    in_first_round = threading.Event()
    rounds: list[str] = []

    def one_a_round(session: Session, hook_queue: JobStore) -> int:
        queued = {job.target_id for job in jobs_of(hook_queue)}
        missing = [target for target in targets if target not in queued]
        if not missing:
            return 0
        hook_queue.enqueue(JobType.SCRAP_REFINE, missing[0], session=session)
        rounds.append(missing[0])
        in_first_round.set()
        runner.executor.shutdown_event.wait(10)  # the window closes while this round runs
        return 1

    registry.sweep_hooks.append(one_a_round)
    runner.start()
    qtbot.waitUntil(in_first_round.is_set, timeout=10_000)

    assert runner.shutdown(wait_ms=10_000)
    assert rounds == ["scrap-1"]  # no round after the shutdown
    assert [job.target_id for job in jobs_of(queue)] == ["scrap-1"]  # the round under way was kept

    sweep(queue, runner.session_id, runner.settings, hooks=[one_a_round])  # the next start's sweep
    assert sorted(job.target_id for job in jobs_of(queue)) == targets


@linux_only
def test_jobs_run_at_a_lower_cpu_priority_than_the_window(
    qtbot: QtBot, runner: JobRunner, registry: ProcessorRegistry, queue: JobStore
) -> None:
    niceness: list[int] = []
    registry.register(JobType.CARD_ANALYSIS, RecordingProcessor(lambda _context: niceness.append(thread_nice())))
    _start(qtbot, runner)
    with qtbot.waitSignal(runner.job_changed, check_params_cb=lambda e: e.new_status is JobStatus.COMPLETED):
        queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert niceness == [max(BACKGROUND_NICE, thread_nice())]
    assert thread_nice() < BACKGROUND_NICE  # the GUI thread's own
