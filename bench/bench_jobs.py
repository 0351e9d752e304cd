"""Job system benchmarks: enqueue, drain through the runner (vs huey's SqliteHuey), GUI lag, monitor."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa
from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication

from bench.common import (
    Row,
    at_most,
    below,
    median,
    percentile,
    qt_app,
    ratio_at_least,
    ratio_at_most,
    temporary_data_dir,
)
from san_desktop.app import SanApp
from san_desktop.bootstrap import Backend, start_backend
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.core.settings import JobSettings, Settings, save_settings
from san_desktop.core.timeutil import utcnow
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob
from san_desktop.jobs.executor import MAX_BATCH
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.store import JobStore

SETTINGS = JobSettings()


def _app() -> QApplication:
    app: QApplication = qt_app()
    return app


def _backend(directory: Path) -> Backend:
    return start_backend(directory, kind="headless", log_to_stderr=False)


def _no_op(_context: JobContext) -> None:
    return None


def _wait_until_done(
    runner: JobRunner, queue: JobStore, total: int, timeout: float, at_the_end: Callable[[], None] = lambda: None
) -> float:
    """Run the event loop until ``total`` jobs completed; returns the seconds it took. ``at_the_end`` is called at
    the last completion, before the loop quits (quitting closes the window)."""
    app = QCoreApplication.instance()
    assert app is not None
    done = {"count": 0}
    start = time.perf_counter()

    def on_changed(event: object) -> None:
        if getattr(event, "new_status", None) is JobStatus.COMPLETED:
            done["count"] += 1
            if done["count"] >= total:
                at_the_end()
                app.quit()

    runner.job_changed.connect(on_changed)
    # a timer that is stopped afterwards: a single shot left pending quit a later benchmark's event loop
    give_up = QTimer()
    give_up.setSingleShot(True)
    give_up.timeout.connect(app.quit)
    give_up.start(int(timeout * 1000))
    runner.start()
    app.exec()
    elapsed = time.perf_counter() - start
    give_up.stop()
    runner.job_changed.disconnect(on_changed)
    if done["count"] < total:
        raise RuntimeError(f"only {done['count']} of {total} jobs completed in {timeout} s")
    return elapsed


def bench_enqueue(count: int = 2000) -> list[Row]:
    with temporary_data_dir() as directory:
        backend = _backend(directory)
        queue = JobStore(backend.db, SETTINGS)
        latencies = []
        start = time.perf_counter()
        for n in range(count):
            began = time.perf_counter()
            queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}")
            latencies.append((time.perf_counter() - began) * 1000)
        total = time.perf_counter() - start
        backend.close()
    return [
        Row("enqueue rate (own transaction)", count / total, "jobs/s", f"{count} jobs, WAL, synchronous=NORMAL"),
        Row("enqueue latency p50", median(latencies), "ms"),
        Row("enqueue latency p99", percentile(latencies, 99), "ms"),
    ]


def bench_drain(count: int = 10_000) -> float:
    """Seconds the runner takes to drain ``count`` no-op jobs (claims in batches, a completion each: a success
    has no attempt row of its own)."""
    _app()
    with temporary_data_dir() as directory:
        backend = _backend(directory)
        queue = JobStore(backend.db, SETTINGS)
        bulk_insert(backend.db, count)
        registry = ProcessorRegistry()
        registry.register(JobType.CARD_ANALYSIS, _no_op)
        runner = JobRunner(queue, registry, backend.require_session(), SETTINGS)
        elapsed = _wait_until_done(runner, queue, count, timeout=600)
        runner.shutdown()
        backend.close()
    return elapsed


def bench_drain_against_huey(count: int = 10_000, rounds: int = 2) -> list[Row]:
    """The runner and huey's SqliteHuey drain the same number of no-op jobs, alternately."""
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(bench_drain(count))
        theirs.append(bench_huey(count))
    elapsed, anchor = median(ours), median(theirs)
    return [
        Row(
            f"drain {count:,} no-op jobs, SQLite, {SETTINGS.ai_pool_size} workers",
            elapsed,
            "s",
            f"{count / elapsed:,.0f} jobs/s; quick jobs claimed in batches (up to {MAX_BATCH}, by the completion "
            f"that empties a worker's hand), each completion its own transaction (failed attempts alone get a "
            f"history row); huey keeps no history; runs "
            f"{', '.join(f'{t:.2f}' for t in ours)} vs {', '.join(f'{t:.2f}' for t in theirs)} s",
            anchor=anchor,
            anchor_name="huey SqliteHuey",
            target=ratio_at_most(0.8),
        )
    ]


def bench_huey(count: int = 10_000) -> float:
    """Seconds huey's SqliteHuey takes to drain ``count`` no-op tasks with as many worker threads, WAL and
    synchronous=NORMAL (the runner's durability)."""
    from huey import SqliteHuey
    from huey.storage import SqliteStorage

    class NormalSyncStorage(SqliteStorage):  # type: ignore[misc]
        """Matching durability: WAL and synchronous=NORMAL, as SAN's engine uses."""

        def _create_connection(self):  # type: ignore[no-untyped-def]
            conn = super()._create_connection()
            conn.execute("pragma synchronous=1")
            return conn

    logging.getLogger("huey").setLevel(logging.ERROR)
    with temporary_data_dir() as directory:
        huey = SqliteHuey(
            "bench",
            filename=str(directory / "huey.db"),
            results=False,
            storage_class=NormalSyncStorage,
            cache_mb=32,
        )
        done = {"count": 0}
        lock = threading.Lock()
        finished = threading.Event()

        @huey.task()  # type: ignore[untyped-decorator]
        def no_op() -> None:
            with lock:
                done["count"] += 1
                if done["count"] >= count:
                    finished.set()

        for _ in range(count):
            no_op()
        consumer = huey.create_consumer(
            workers=SETTINGS.ai_pool_size,
            worker_type="thread",
            periodic=False,
            initial_delay=0.001,
            backoff=1.0,
            max_delay=0.01,
            check_worker_health=False,
        )
        start = time.perf_counter()
        consumer.start()
        finished.wait(600)
        elapsed = time.perf_counter() - start
        consumer.stop(graceful=True)
        huey.storage.close()
    return elapsed


def bulk_insert(db: Database, count: int, job_type: JobType = JobType.CARD_ANALYSIS, **values: object) -> None:
    """``count`` jobs in one transaction (a library's backlog)."""
    now = db.clock()
    rows = [
        {
            "id": new_id(),
            "job_type": job_type,
            "target_id": f"target-{n}",
            "status": JobStatus.PENDING,
            "attempts": 0,
            "max_attempts": 3,
            "created_at": now,
            "updated_at": now,
            **values,
        }
        for n in range(count)
    ]
    with db.write() as session:
        session.execute(sa.insert(AsyncJob), rows)


def bench_gui_lag(count: int = 1000) -> list[Row]:
    from san_desktop.ui.common.context import build_context
    from san_desktop.ui.main_window import MainWindow

    app = _app()
    with temporary_data_dir() as directory:
        backend = _backend(directory)
        queue = JobStore(backend.db, SETTINGS)
        bulk_insert(backend.db, count)

        def small_work(_context: JobContext) -> None:
            sum(i * i for i in range(5_000))  # about a millisecond of work per job

        registry = ProcessorRegistry()
        registry.register(JobType.CARD_ANALYSIS, small_work)
        save_settings(directory, Settings(jobs=SETTINGS))
        context = build_context(SanApp(backend), registry)
        runner, queue = context.runner, context.app.queue
        window = MainWindow(context)
        window.show_page("jobs")
        window.show()
        lags: list[float] = []
        clock = QElapsedTimer()
        interval = 5

        def tick() -> None:
            lags.append(max(0.0, clock.restart() - interval))

        ticker = QTimer()
        ticker.setInterval(interval)
        ticker.timeout.connect(tick)
        clock.start()
        ticker.start()
        # (stopped at the last completion: closing the window is not running jobs)
        elapsed = _wait_until_done(runner, queue, count, timeout=300, at_the_end=ticker.stop)
        ticker.stop()
        window.close()
        app.processEvents()
        window.deleteLater()
        # the runner and the page's background reads stopped before the folder goes (a count still running
        # read a removed database: "unable to open database file")
        context.shutdown()
        backend.close()
    return [
        Row(
            "GUI event-loop lag while 1,000 jobs run, worst",
            max(lags),
            "ms",
            f"p99 {percentile(lags, 99):.1f} ms; jobs page open; drained in {elapsed:.1f} s",
            target=below(50),
        )
    ]


def bench_monitor(count: int = 100_000) -> list[Row]:
    from san_desktop.ui.common.context import build_context
    from san_desktop.ui.jobs.page import JobsPage

    app = _app()
    with temporary_data_dir() as directory:
        backend = _backend(directory)
        bulk_insert(backend.db, count, status=JobStatus.COMPLETED)
        context = build_context(SanApp(backend), ProcessorRegistry())
        runner = context.runner
        start = time.perf_counter()
        page = JobsPage(context)
        page.resize(1000, 700)
        page.show()
        app.processEvents()
        first = (time.perf_counter() - start) * 1000
        fetches = []
        for _ in range(20):
            began = time.perf_counter()
            page.model.fetchMore(page.model.index(0, 0).parent())
            fetches.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        page.table.scrollToBottom()
        app.processEvents()
        scroll = (time.perf_counter() - began) * 1000
        page.close()
        runner.shutdown()
        backend.close()
    return [
        Row("job monitor first show, 100,000 jobs", first, "ms", "lazy: first page of 200 rows"),
        Row("job monitor fetch of the next page", median(fetches), "ms", f"p99 {percentile(fetches, 99):.1f} ms"),
        Row("job monitor scroll to bottom (one fetch)", scroll, "ms"),
    ]


def drain_with_the_product(backend: Backend, queue: JobStore) -> float:
    """Seconds the runner with the product's processors and the embedded provider (its AI pool as the app
    sizes it: ``Settings.ai_threads``) takes to finish every waiting job, on the one QApplication's event
    loop."""
    from san_desktop.ai.factory import ProviderSource
    from san_desktop.jobs.processors import build_registry
    from san_desktop.services.root import Services

    app = _app()
    settings = Settings(jobs=SETTINGS)
    runner = JobRunner(
        queue,
        build_registry(Services.of_store(queue, lambda: settings), ProviderSource(settings.ai)),
        backend.require_session(),
        SETTINGS,
        ai_threads=settings.ai_threads,
    )

    def unfinished() -> int:
        with backend.db.sessions() as session:
            waiting = (JobStatus.PENDING, JobStatus.PROCESSING)
            return session.scalar(sa.select(sa.func.count()).where(AsyncJob.status.in_(waiting))) or 0

    poll = QTimer()  # quits the event loop once every job is done
    poll.timeout.connect(lambda: unfinished() or app.quit())
    poll.start(50)
    began = time.perf_counter()
    runner.start()
    app.exec()
    elapsed = time.perf_counter() - began
    poll.stop()
    runner.shutdown()
    return elapsed


def bench_end_to_end(count: int = 5000) -> list[Row]:
    """Realistic scraps captured, then turned into cards by the runner with the embedded provider; the
    database's size per 1,000 scraps with their cards, jobs and attempts (after a checkpoint)."""
    from san_desktop.services.scraps import ScrapService
    from tests.support.real_text import card_texts

    with temporary_data_dir() as directory:
        backend = _backend(directory)
        queue = JobStore(backend.db, SETTINGS)
        scraps = ScrapService(backend.db, queue)
        texts = card_texts(count, seed=3)
        for text in texts:
            scraps.capture(text)
        elapsed = drain_with_the_product(backend, queue)
        with backend.db.sessions() as session:
            cards = session.scalar(sa.text("SELECT count(*) FROM knowledge_cards")) or 0
            durations = [
                row[0] * 1000
                for row in session.execute(
                    sa.text(  # a successful attempt is its job row's own start and finish
                        "SELECT (julianday(finished_at) - julianday(started_at)) * 86400 FROM async_jobs "
                        "WHERE status = 'COMPLETED' AND started_at IS NOT NULL"
                    )
                )
            ]
        backend.close()  # the last connection checkpoints the WAL into the file
        size = sum(path.stat().st_size for path in directory.rglob("san.db*"))
        pruned = _size_once_pruned(directory)
    return [
        Row(
            f"scraps -> cards end to end, {count:,} real-text scraps",
            cards / elapsed,
            "cards/s",
            f"embedded provider (AI pool of {Settings(jobs=SETTINGS).ai_threads} threads), 2 jobs a scrap "
            "(card, refined text)",
            anchor=_provider_rate(texts),
            anchor_name="the provider's own work, one thread",
            target=ratio_at_least(0.9),
        ),
        Row(
            "scraps -> cards, per-job time p99",
            percentile(durations, 99),
            "ms",
            f"p50 {median(durations):.1f} ms; claim to completion of each attempt",
            target=below(50),
        ),
        Row(
            "database per 1,000 scraps with cards, jobs, attempts",
            size / count * 1000 / 1e6,
            "MB",
            "after the last connection checkpointed the WAL; before pruning",
            target=at_most(7),
        ),
        Row(
            "database per 1,000 scraps with cards, once their completed jobs are pruned",
            pruned / count * 1000 / 1e6,
            "MB",
            "the sweep's pruning a week later (injected time), then VACUUM (as a backup or a fresh copy has it)",
            target=at_most(6),
        ),
    ]


def _size_once_pruned(directory: Path) -> int:
    """The database's size once its completed jobs are pruned (``JobStore.prune`` a week later, in the
    sweep's batches) and the file is vacuumed."""
    backend = start_backend(directory, kind="headless", log_to_stderr=False)
    week_later = utcnow() + timedelta(days=SETTINGS.keep_completed_days + 1)
    later = JobStore(backend.db, SETTINGS, clock=lambda: week_later)
    while True:
        with backend.db.write() as session:
            if not later.prune(session, 5_000):
                break
    driver, path = backend.db.backend.driver.module, backend.db.path
    backend.close()
    conn = driver.connect(str(path), isolation_level=None)  # VACUUM runs outside any transaction
    conn.execute("VACUUM")
    conn.close()
    return sum(path.stat().st_size for path in directory.rglob("san.db*"))


def _provider_rate(texts: list[str]) -> float:
    """Scraps a second the embedded provider alone turns into a card, a vector and a refined text."""
    from san_desktop.ai.base import DEFAULT_CATEGORIES, embedding_text
    from san_desktop.ai.local import LocalProvider

    provider = LocalProvider()
    began = time.perf_counter()
    for text in texts:
        refined = provider.refine_scrap(text) or text
        draft = provider.analyze_card(refined, DEFAULT_CATEGORIES)
        provider.embed([embedding_text(draft.title, draft.summary, draft.tags, refined)])
    return len(texts) / (time.perf_counter() - began)


def run_all() -> list[Row]:
    rows = bench_end_to_end()
    rows += bench_enqueue()
    rows += bench_drain_against_huey()
    rows += bench_gui_lag()
    rows += bench_monitor()
    return rows
