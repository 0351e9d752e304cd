"""The job monitor at 100,000 jobs: applying a filter (first page and live counts), and bulk-retrying
10,000 failed jobs from the open window with the GUI event loop's worst lag meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer

from bench.common import LagMeter, Row, median, qt_app, temporary_data_dir
from san_desktop.app import SanApp, open_app
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.core.settings import JobSettings, Settings, save_settings
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.queue.monitor import JobFilter

TOTAL = 100_000
FAILED = 10_000
ERRORS = (
    "TransientError: AI server at http://127.0.0.1:{n} answered 500 <- HTTPStatusError: Server error '500'",
    "ReadTimeout: the AI server did not answer within {n} s",
    "PermanentError: the model answered no JSON after {n} tokens",
)
REPEATS = 7


def _fill(app: SanApp) -> None:
    """100,000 jobs as a long-used app leaves them: mostly completed card work, 10,000 failed ones with
    three kinds of error, some TIL and commit jobs."""
    now = db_time(app.queue.clock())
    rows = []
    for n in range(TOTAL):
        if n % 10 == 0:
            status, error, job_type = JobStatus.FAILED, ERRORS[n % 3].format(n=n % 997), JobType.CARD_ANALYSIS
        elif n % 50 == 1:
            status, error, job_type = JobStatus.COMPLETED, None, JobType.TIL_GENERATION
        elif n % 50 == 3:
            status, error, job_type = JobStatus.COMPLETED, None, JobType.TIL_GITHUB_COMMIT
        else:
            status, error, job_type = JobStatus.COMPLETED, None, JobType.SCRAP_REFINE
        rows.append((new_id(), job_type.value, f"target-{n}", status.value, error, now, now, now))
    with app.db.write_cursor() as cursor:
        cursor.executemany(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, error_message, "
            "created_at, updated_at, finished_at) VALUES (?, ?, ?, ?, 3, 3, ?, ?, ?, ?)",
            rows,
        )


def _prepare(directory: Path) -> None:
    # both pools paused: the re-queued jobs wait (their targets do not exist), what is measured is the
    # re-queue and the window following it
    save_settings(directory, Settings(jobs=JobSettings(ai_paused=True, github_paused=True)))
    with open_app(directory, kind="cli", lock=False, log_to_stderr=False) as app:
        _fill(app)


def _timed(call: object) -> float:
    start = time.perf_counter()
    call()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def bench_filters(directory: Path) -> list[Row]:
    filters = {
        "status Failed": JobFilter(statuses=frozenset({JobStatus.FAILED})),
        "type TIL generation": JobFilter(job_types=frozenset({JobType.TIL_GENERATION})),
        "text 'did not answer'": JobFilter(text="did not answer"),
        "Failed + card analysis + text": JobFilter(
            frozenset({JobStatus.FAILED}), frozenset({JobType.CARD_ANALYSIS}), text="no JSON"
        ),
    }
    rows: list[Row] = []
    with open_app(directory, kind="cli", lock=False, log_to_stderr=False) as app:
        floor = median([_timed(lambda: app.jobs.list_jobs(JobFilter())) for _ in range(REPEATS)])
        for name, where in filters.items():
            pages, counts = [], []
            for _ in range(REPEATS):
                pages.append(_timed(lambda where=where: app.jobs.list_jobs(where)))
                counts.append(_timed(lambda where=where: app.jobs.counts(where)))
            page, count = median(pages), median(counts)
            rows.append(
                Row(
                    f"job monitor filter at {TOTAL // 1000}k jobs: {name} (first page + counts)",
                    page + count,
                    "ms",
                    f"page {page:.1f} + counts {count:.1f} ms, off the GUI thread",
                    anchor=floor,
                    anchor_name="unfiltered first page",
                )
            )
        groups = median([_timed(app.jobs.failure_groups) for _ in range(3)])
        rows.append(Row(f"failure groups of {FAILED // 1000}k failed jobs", groups, "ms", "3 groups"))
    return rows


def bench_bulk_retry(directory: Path) -> list[Row]:
    from san_desktop.ui.common.context import build_context, freeze_startup_objects
    from san_desktop.ui.main_window import MainWindow

    qt = qt_app()
    with open_app(directory, kind="gui", log_to_stderr=False) as app:
        context = build_context(app)
        window = MainWindow(context)
        window.show_page("jobs")
        window.show()
        page = window.jobs
        page.bulk.confirm = lambda _text: True  # (no question box in a benchmark)
        loop = QEventLoop()
        with_sweep = QEventLoop()
        context.runner.sweep_finished.connect(lambda _report: with_sweep.quit())
        context.start()
        with_sweep.exec()
        freeze_startup_objects()
        page.show_filter(JobFilter(statuses=frozenset({JobStatus.FAILED})))
        settle = QEventLoop()
        QTimer.singleShot(1000, settle.quit)  # the filtered page and counts arrive
        settle.exec()

        lag = LagMeter()
        said: list[str] = []
        original_say = page.say

        def say(text: str) -> None:
            original_say(text)
            said.append(text)
            if "queued again" in text:
                QTimer.singleShot(300, loop.quit)  # the rows and counts follow meanwhile

        page.say = say  # type: ignore[method-assign]
        lag.start()
        start = time.perf_counter()
        page.retry_matching_button.click()
        give_up = QTimer()
        give_up.setSingleShot(True)
        give_up.timeout.connect(loop.quit)
        give_up.start(120_000)
        loop.exec()
        give_up.stop()
        elapsed = (time.perf_counter() - start) * 1000 - 300
        lag.stop()
        requeued = app.jobs.counts()[JobStatus.PENDING]
        window.close()
        qt.processEvents()
    note = f"{requeued:,} re-queued; {said[-1] if said else 'no answer'}"
    return [
        Row(f"bulk retry of {FAILED // 1000}k failed jobs from the open monitor", elapsed, "ms", note),
        lag.row("GUI event-loop lag during that bulk retry, worst", "monitor open, filtered to failures"),
    ]


def run_all() -> list[Row]:
    with temporary_data_dir() as directory:
        _prepare(directory)
        return bench_filters(directory) + bench_bulk_retry(directory)


def run_bulk_retry() -> list[Row]:
    """The bulk retry and the window's lag meanwhile, without the filters' rows."""
    with temporary_data_dir() as directory:
        _prepare(directory)
        return bench_bulk_retry(directory)


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
