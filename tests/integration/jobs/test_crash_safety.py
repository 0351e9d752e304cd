"""No job is lost, stuck or completed twice when the runner process is killed with SIGKILL mid-drain."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.core.enums import AttemptOutcome, JobStatus, JobType
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, JobAttempt
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings
from tests.support.processes import child_env

REPO = Path(__file__).resolve().parents[3]
JOBS = 300
KILL_AFTER = (30, 60, 60)  # completions seen before each SIGKILL


def _start(data_dir: Path, output: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.headless_worker", str(data_dir), str(output)],
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _processing_attempts(db: Database) -> set[tuple[str, int]]:
    """(job, attempt number) of the attempts running now (a running attempt is its job row's own)."""
    with db.sessions() as session:
        rows = session.execute(sa.select(AsyncJob.id, AsyncJob.attempts).where(AsyncJob.status == JobStatus.PROCESSING))
        return {(job_id, attempt) for job_id, attempt in rows}


@pytest.mark.slow
def test_sigkill_mid_drain_loses_and_repeats_nothing(db: Database, data_dir: Path, tmp_path: Path) -> None:
    queue = JobStore(db, fast_settings())
    job_ids = {
        queue.enqueue(JobType.CARD_ANALYSIS if n % 3 else JobType.TIL_GITHUB_COMMIT, f"target-{n}").id
        for n in range(JOBS)
    }
    output = tmp_path / "outcome.txt"
    killed_attempts: set[tuple[str, int]] = set()

    for completions in KILL_AFTER:
        worker = _start(data_dir, output)
        assert worker.stdout is not None
        seen = 0
        while seen < completions:
            line = worker.stdout.readline()
            assert line, "the worker ended before it could be killed"
            seen += line.startswith("done ")
        worker.kill()  # SIGKILL: no cleanup of any kind
        worker.wait(timeout=60)
        worker.stdout.close()
        killed_attempts |= _processing_attempts(db)

    final = subprocess.run(
        [sys.executable, "-m", "tests.support.headless_worker", str(data_dir), str(output)],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert final.returncode == 0, final.stderr[-2000:]

    # every job completed, none stuck
    with db.sessions() as session:
        statuses = Counter(session.scalars(sa.select(AsyncJob.status)))
        rows = session.execute(sa.select(JobAttempt.job_id, JobAttempt.attempt, JobAttempt.outcome))
        outcomes = {(job_id, attempt): outcome for job_id, attempt, outcome in rows}
    succeeded = Counter(
        job_id
        for job_id in job_ids
        for attempt in queue.attempts(job_id)
        if attempt.outcome is AttemptOutcome.SUCCEEDED
    )
    assert statuses == {JobStatus.COMPLETED: JOBS}
    # completed exactly once: one succeeded attempt per job, and each job once in the outcome file
    assert set(succeeded) == job_ids
    assert set(succeeded.values()) == {1}
    lines = output.read_text(encoding="utf-8").split()
    recorded = Counter(lines[0::2])
    assert set(recorded) == job_ids
    assert set(recorded.values()) == {1}
    # the attempts the kills cut short are recorded as interrupted
    assert killed_attempts, "no kill landed while a job was running"
    assert {outcomes[attempt] for attempt in killed_attempts} == {AttemptOutcome.INTERRUPTED}
    assert all(outcome is not None for outcome in outcomes.values())
