"""``san jobs run --timeout`` ends the process on time even when a job never ends (issue 23: a stuck job
kept `--timeout 20` alive past 120 s). The stopping run gives the stuck job back to the queue as interrupted
(issue 38); one that holds the interpreter itself, where nothing of the run goes on, the next start's recovery
sweep gives back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from san_desktop.core.enums import AttemptOutcome, JobStatus, JobType
from san_desktop.db.database import Database
from san_desktop.jobs.executor import CLOSING
from san_desktop.jobs.headless import HARD_STOP_SECONDS, STOP_GRACE_SECONDS
from san_desktop.queue.store import JobStore
from san_desktop.services.scraps import ScrapService
from tests.support.jobs import analysis_job, fast_settings
from tests.support.processes import child_env, run_python, run_san

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 3.0
# the run's timeout, the running jobs' grace, and time to start and stop a Python process on a busy machine
ENDS_WITHIN = TIMEOUT + STOP_GRACE_SECONDS + 30


def _ran(args: list[str], within: float = ENDS_WITHIN, **env: str) -> subprocess.CompletedProcess[str]:
    try:
        return run_python(args, cwd=REPO, env=child_env(**env), timeout=within)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} was still running {within:.0f} s after it started")


def _given_back(queue: JobStore, job_id: str) -> None:
    """Given back to the queue by the run that stopped: waiting, no attempt spent, the attempt interrupted."""
    job = queue.get(job_id)
    assert (job.status, job.attempts, job.owner_session) == (JobStatus.PENDING, 0, None)
    assert [(attempt.outcome, attempt.error_text) for attempt in queue.attempts(job_id)] == [
        (AttemptOutcome.INTERRUPTED, CLOSING)
    ]


def _requeued_by_the_next_start(job_id: str) -> None:
    swept = run_san("jobs", "sweep", "--json")
    assert swept.returncode == 0, swept.stderr
    assert f'"requeued_interrupted": [\n    "{job_id}"\n  ]' in swept.stdout


def test_timeout_ends_the_run_though_the_embedded_provider_never_returns(db: Database, tmp_path: Path) -> None:
    queue = JobStore(db, fast_settings())
    job_id = analysis_job(ScrapService(db, queue).capture("SQLite WAL lets readers go on while one writer commits."))
    ran = _ran(
        ["-m", "san_desktop.cli.main", "jobs", "run", "--timeout", str(TIMEOUT)],
        SAN_FAILPOINTS="local.analyze_card",
        SAN_FAILPOINT_DIR=str(tmp_path),
    )
    assert (tmp_path / "local.analyze_card.reached").exists()  # it was stuck, not finished
    assert ran.returncode == 124, ran.stderr
    assert (
        f"1 job still running {STOP_GRACE_SECONDS:g} s after the stop ({job_id}); ending the process (given back "
        "to the queue)"
    ) in ran.stderr
    _given_back(queue, job_id)


def test_timeout_ends_the_run_though_a_job_spins_in_python(db: Database, data_dir: Path) -> None:
    queue = JobStore(db, fast_settings())
    job_id = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1").id
    ran = _ran(["-m", "tests.support.stuck_worker", str(data_dir), "python", str(TIMEOUT)])
    assert f"stuck {job_id}" in ran.stdout
    assert ran.returncode == 124, ran.stderr
    _given_back(queue, job_id)


def test_a_job_that_holds_the_interpreter_cannot_keep_the_run_alive(db: Database, data_dir: Path) -> None:
    """Inside one regular expression Python runs no other thread, not even the one with the timer: a
    watchdog outside the interpreter ends the process, with every thread's stack for the bug report."""
    job_id = JobStore(db, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "scrap-1").id
    ran = _ran(
        ["-m", "tests.support.stuck_worker", str(data_dir), "regex", str(TIMEOUT)],
        within=ENDS_WITHIN + HARD_STOP_SECONDS,
    )
    assert f"stuck {job_id}" in ran.stdout
    assert ran.returncode == 1
    assert "_backtrack" in ran.stderr  # the stuck thread's stack
    _requeued_by_the_next_start(job_id)
