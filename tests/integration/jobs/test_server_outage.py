"""A runner (`san jobs run`) whose library's server restarts mid-drain connects again and goes on: no job left
running, none lost or done twice, the outage said once and no traceback. One that gives up on a server that
stays away exits non-zero with one sentence, and its jobs are taken back by the next start."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.database import Database, open_server_database
from san_desktop.db.models import AsyncJob
from san_desktop.jobs.headless import DATABASE_AWAY
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary
from tests.support.processes import child_env

JOBS = 200
RESTART_AFTER = 40  # jobs done before the server restarts
GIVE_UP = 3.0


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own: it is restarted."""
    server = start_temporary()
    yield server
    stop_temporary(server)


@pytest.fixture
def library(own_server: PostgresServer, tmp_path: Path) -> Iterator[tuple[str, Database]]:
    url = own_server.create_database(template=own_server.migrated_template())
    folder = tmp_path / "test"
    folder.mkdir()
    database = open_server_database(url, folder)
    yield url, database
    database.dispose()


def _runner(folder: Path, url: str, stderr: Path, *, give_up: float = 300.0) -> subprocess.Popen[str]:
    folder.mkdir(exist_ok=True)
    with stderr.open("w", encoding="utf-8") as said:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.support.lease_worker", str(folder), "2", str(give_up)],
            env=child_env(**{DATABASE_URL_ENV: url}),
            stdout=subprocess.PIPE,
            stderr=said,
            text=True,
        )


def _statuses(db: Database) -> Counter[JobStatus]:
    with db.sessions() as session:
        return Counter(JobStatus(status) for status in session.scalars(sa.select(AsyncJob.status)))


def _wait_for_done(runner: subprocess.Popen[str], count: int) -> set[str]:
    done: set[str] = set()
    assert runner.stdout is not None
    while len(done) < count:
        line = runner.stdout.readline()
        assert line, "the runner ended first"
        if line.startswith("done "):
            done.add(line.split()[1])
    return done


@pytest.mark.slow
def test_a_runner_goes_on_after_its_server_restarts_mid_drain(
    own_server: PostgresServer, library: tuple[str, Database], tmp_path: Path
) -> None:
    url, db = library
    queue = JobStore(db, fast_settings())
    job_ids = {queue.enqueue(JobType.CARD_ANALYSIS, f"slow-{n}").id for n in range(JOBS)}
    stderr = tmp_path / "runner.err"
    runner = _runner(tmp_path / "machine", url, stderr)
    try:
        _wait_for_done(runner, RESTART_AFTER)
        own_server.stop("fast")  # (committed work survives the restart: what a real server does)
        own_server.start()
        assert runner.stdout is not None
        done = {line.split()[1] for line in runner.stdout if line.startswith("done ")}
        code = runner.wait(120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
        if runner.stdout is not None:
            runner.stdout.close()
    said = stderr.read_text(encoding="utf-8")
    assert code == 0, said
    assert _statuses(db) == Counter({JobStatus.COMPLETED: JOBS}), said  # none left running, none failed
    assert done <= job_ids
    assert "Traceback" not in said
    assert said.count("cannot be reached") <= 1, said  # the outage said once (not per worker, not per try)
    assert "Nothing left to run." in said


@pytest.mark.slow
def test_a_runner_that_gives_up_says_so_in_a_sentence_and_its_jobs_are_taken_back(
    own_server: PostgresServer, library: tuple[str, Database], tmp_path: Path
) -> None:
    url, db = library
    queue = JobStore(db, fast_settings())
    held = queue.enqueue(JobType.CARD_ANALYSIS, "gate-held")
    machine = tmp_path / "machine"
    stderr = tmp_path / "runner.err"
    runner = _runner(machine, url, stderr, give_up=GIVE_UP)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == f"running {held.id}"
        db.dispose()
        own_server.stop("fast")  # and it stays away
        code = runner.wait(GIVE_UP + 30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
        if runner.stdout is not None:
            runner.stdout.close()
    said = stderr.read_text(encoding="utf-8")
    assert code == DATABASE_AWAY, said
    assert "Traceback" not in said
    last = said.strip().splitlines()[-1]
    assert last.startswith(f"Gave up: the database {url.rsplit('/', 1)[1]} on 127.0.0.1:")
    assert f"could not be reached for {GIVE_UP:g} s" in last
    assert "1 job it held could not be given back to the queue" in last
    assert said.count("cannot be reached") <= 1, said

    own_server.start()
    (tmp_path / "gate-held").touch()  # the job may finish, the next time it runs
    again = _runner(machine, url, tmp_path / "again.err")  # this machine again: it gives the job back at once
    try:
        assert again.stdout is not None
        assert f"done {held.id}" in again.stdout.read()
        assert again.wait(60) == 0
    finally:
        if again.poll() is None:
            again.kill()
            again.wait(10)
        if again.stdout is not None:
            again.stdout.close()
    assert queue.get(held.id).status is JobStatus.COMPLETED
