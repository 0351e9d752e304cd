"""``san jobs ...`` in child processes, on the test's data directory."""

from __future__ import annotations

import json

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.db.database import Database
from san_desktop.queue.job_queue import JobQueue
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings
from tests.support.processes import run_san


def test_list_show_cancel_retry(db: Database) -> None:
    queue = JobQueue(db, fast_settings())
    waiting = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    other = queue.enqueue(JobType.TIL_GITHUB_COMMIT, "commit-1")

    listed = run_san("jobs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [job["id"] for job in json.loads(listed.stdout)] == [other.id, waiting.id]

    filtered = run_san("jobs", "list", "--type", "til_github_commit", "--status", "PENDING")
    assert filtered.returncode == 0
    assert other.id in filtered.stdout
    assert waiting.id not in filtered.stdout

    cancelled = run_san("jobs", "cancel", waiting.id)
    assert cancelled.returncode == 0
    assert f"Job {waiting.id} cancelled." in cancelled.stdout
    assert queue.get(waiting.id).status is JobStatus.CANCELLED

    retried = run_san("jobs", "retry", waiting.id)
    assert retried.returncode == 0, retried.stderr
    assert queue.get(waiting.id).status is JobStatus.PENDING

    shown = run_san("jobs", "show", waiting.id, "--json")
    assert shown.returncode == 0
    detail = json.loads(shown.stdout)
    assert detail["job"]["status"] == "PENDING"
    assert detail["attempts"] == []

    human = run_san("jobs", "show", waiting.id)
    assert "Status:     PENDING" in human.stdout


def test_unknown_ids_and_bad_actions_have_clear_exit_codes(db: Database) -> None:
    queue = JobQueue(db, fast_settings())
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")

    missing = run_san("jobs", "show", "01a00000-0000-7000-8000-000000000000")
    assert missing.returncode == 5
    assert "There is no job with id" in missing.stderr

    not_failed = run_san("jobs", "retry", job.id)
    assert not_failed.returncode == 1
    assert "only failed or cancelled jobs can be retried" in not_failed.stderr

    bad_status = run_san("jobs", "list", "--status", "SLEEPING")
    assert bad_status.returncode == 2
    assert "unknown status" in bad_status.stderr


def test_sweep_recovers_and_refuses_while_an_app_runs(db: Database, data_dir: object) -> None:
    queue = JobQueue(db, fast_settings())
    dead = start_session(db, "gui")
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert queue.claim_next(dead, JobPool.AI, {JobType.CARD_ANALYSIS}) is not None

    swept = run_san("jobs", "sweep", "--json")
    assert swept.returncode == 0, swept.stderr
    assert json.loads(swept.stdout)["requeued_interrupted"] == [job.id]
    assert queue.get(job.id).status is JobStatus.PENDING

    with InstanceLock(db.path.parent):
        refused = run_san("jobs", "sweep")
        running = run_san("jobs", "run", "--until-idle")
    assert refused.returncode == 3
    assert "already running" in refused.stderr
    assert running.returncode == 3


def test_headless_run_until_idle_and_timeout(db: Database) -> None:
    queue = JobQueue(db, fast_settings())
    job = queue.enqueue(JobType.CARD_ANALYSIS, "no-such-scrap")
    idle = run_san("jobs", "run", "--until-idle", "--timeout", "60")
    assert idle.returncode == 0, idle.stderr
    assert "Nothing left to run" in idle.stderr
    failed = queue.get(job.id)
    assert failed.status is JobStatus.FAILED
    assert failed.attempts == 1  # no retry for a missing target
    assert "Target data not found (Already deleted)" in (failed.error_message or "")

    timed = run_san("jobs", "run", "--timeout", "0.5")
    assert timed.returncode == 0
    assert "Timeout reached" in timed.stderr
