"""``san jobs ...`` in child processes, on the test's data directory."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.core.settings import AISettings, JobSettings, Settings, save_settings
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from san_desktop.services.scraps import ScrapService
from tests.support.jobs import analysis_job, fast_settings, insert_jobs
from tests.support.openai_server import fake_openai_server
from tests.support.processes import run_san


def test_list_show_cancel_retry(db: Database) -> None:
    queue = JobStore(db, fast_settings())
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
    assert "Status:     Waiting (PENDING)" in human.stdout


def test_unknown_ids_and_bad_actions_have_clear_exit_codes(db: Database) -> None:
    queue = JobStore(db, fast_settings())
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
    queue = JobStore(db, fast_settings())
    dead = start_session(db, "gui")
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert queue.claim_next(dead, JobPool.AI, {JobType.CARD_ANALYSIS}) is not None

    swept = run_san("jobs", "sweep", "--json")
    assert swept.returncode == 0, swept.stderr
    assert json.loads(swept.stdout)["requeued_interrupted"] == [job.id]
    assert queue.get(job.id).status is JobStatus.PENDING

    with InstanceLock(db.data_dir):
        refused = run_san("jobs", "sweep")
        running = run_san("jobs", "run", "--until-idle")
    assert refused.returncode == 3
    assert "already running" in refused.stderr
    assert running.returncode == 3


def test_headless_run_until_idle_and_timeout(db: Database) -> None:
    queue = JobStore(db, fast_settings())
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


def test_jobs_run_keeps_info_lines_in_the_log_file_not_on_the_terminal(db: Database, data_dir: Path) -> None:
    """Issue 24: `san jobs run` printed every INFO log line (start, each job's state, the sweep)."""
    queue = JobStore(db, fast_settings())
    job = analysis_job(ScrapService(db, queue).capture("SQLite keeps a write-ahead log beside the database."))
    ran = run_san("jobs", "run", "--until-idle", "--timeout", "60")
    assert ran.returncode == 0, ran.stderr
    assert queue.get(job).status is JobStatus.COMPLETED
    assert " INFO " not in ran.stderr, ran.stderr
    assert ran.stderr == "Nothing left to run.\n"  # why it stopped, as a sentence
    log = (data_dir / "logs" / "san.log").read_text(encoding="utf-8")
    assert f"Job {job} CARD_ANALYSIS: PROCESSING -> COMPLETED" in log  # the log file keeps them

    verbose = run_san("jobs", "run", "--until-idle", "--timeout", "60", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert " INFO " in verbose.stderr  # asked for


def test_a_one_megabyte_token_becomes_a_card_well_within_the_timeout(db: Database, tmp_path: Path) -> None:
    """Issue 23: a token without spaces as long as a scrap may be held the embedded provider for hours."""
    token = tmp_path / "token.txt"
    token.write_text("a." * 499_000 + "md", encoding="utf-8")  # 998,002 bytes: one "file name"
    added = run_san("scrap", "add", "--file", str(token))
    assert added.returncode == 0, added.stderr
    try:
        ran = run_san("jobs", "run", "--until-idle", "--timeout", "20", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("`san jobs run --timeout 20` was still running after 60 s")
    assert ran.returncode == 0, ran.stderr
    assert "Nothing left to run" in ran.stderr
    listed = run_san("cards", "list", "--json")
    assert [card["title"] for card in json.loads(listed.stdout)] == ["Untitled scrap"]


def _ai_server_settings(data_dir: Path, url: str) -> None:
    """The AI server at ``url``; 2 failures in a row pause the AI pool, for longer than the test runs."""
    jobs = JobSettings(
        breaker_failure_threshold=2,
        breaker_cooldown_seconds=3600.0,
        breaker_max_cooldown_seconds=3600.0,
        backoff_base_seconds=3600.0,
        poll_interval_seconds=0.1,
    )
    ai = AISettings(provider="openai", base_url=url, chat_model="gpt-test", embedding_model="embed-test")
    save_settings(data_dir, Settings(jobs=jobs, ai=ai))


def _run_until_idle(*options: str) -> subprocess.CompletedProcess[str]:
    try:
        return run_san("jobs", "run", "--until-idle", *options, "--timeout", "20", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("`san jobs run --timeout 20` was still running after 60 s")


def test_until_idle_stops_when_failures_pause_the_ai_pool_and_says_so(db: Database, data_dir: Path) -> None:
    """Issue 23: with the AI pool paused by failures, `--until-idle` ran until `--timeout` ended it."""
    queue = JobStore(db, fast_settings())
    scraps = ScrapService(db, queue)
    jobs = [analysis_job(scraps.capture(f"Scrap number {n} about SQLite.")) for n in range(4)]
    with fake_openai_server() as server:
        server.behaviour = "500"
        _ai_server_settings(data_dir, server.url)
        ran = _run_until_idle()
    assert ran.returncode == 75, ran.stderr  # EX_TEMPFAIL: try again later
    assert re.search(
        r"\n\d+ AI job\(s\) wait: the AI pool is paused after \d+ failures in a row \(the last: HTTP 500 Internal "
        r"Server Error from http://127\.0\.0\.1:\d+/v1/chat/completions: The server had an error\); run `san jobs "
        r"run` again later, or see `san jobs failures`\.\n",
        ran.stderr,
    ), ran.stderr
    assert {queue.get(job).status for job in jobs} == {JobStatus.PENDING}  # nothing lost, nothing failed


def test_until_idle_stops_when_the_ai_server_rejects_the_key(db: Database, data_dir: Path) -> None:
    """Waiting for retries cannot help a key the server rejects: even `--wait-retries` stops, and says why."""
    queue = JobStore(db, fast_settings())
    scraps = ScrapService(db, queue)
    jobs = [analysis_job(scraps.capture(f"Scrap number {n} about SQLite.")) for n in range(3)]
    with fake_openai_server() as server:
        server.behaviour = "401"
        _ai_server_settings(data_dir, server.url)
        ran = _run_until_idle("--wait-retries")
    assert ran.returncode == 75, ran.stderr
    assert (
        "AI job(s) wait: the AI pool is paused. The AI server asks for an API key (401): set OPENAI_API_KEY in "
        "SAN Desktop's environment (no usable keyring here: no keyring backend is available on this system); "
        "then run `san jobs run` again.\n"
    ) in ran.stderr
    assert [queue.get(job).attempts for job in jobs] == [0, 0, 0]
    assert {queue.get(job).status for job in jobs} == {JobStatus.PENDING}


def test_jobs_list_says_how_many_more_match(db: Database) -> None:
    """As `san scrap list` and `san cards list` (issue 38, item 15): a list cut at its limit says so."""
    queue = JobStore(db, fast_settings())
    insert_jobs(queue, 3)
    queue.enqueue(JobType.TIL_GITHUB_COMMIT, "commit-1")
    more = "not shown: add `--limit N` to see N, or `--all`.\n"
    assert run_san("jobs", "list", "--limit", "2").stderr == f"2 more jobs {more}"
    failed = run_san("jobs", "list", "--status", "failed", "--limit", "2")
    assert len(failed.stdout.splitlines()) == 1 + 2
    assert failed.stderr == f"1 more job {more}"  # of those matching
    everything = run_san("jobs", "list", "--all", "--json")
    assert len(json.loads(everything.stdout)) == 4
    assert everything.stderr == ""


def test_a_jobs_status_is_said_in_the_windows_words(db: Database) -> None:
    """Issue 38, item 15: the command line said PENDING and PROCESSING where the window says Waiting and
    Running; --status takes either."""
    queue = JobStore(db, fast_settings())
    waiting = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    (failed,) = insert_jobs(queue, 1, target=lambda _n: "scrap-2")
    listed = run_san("jobs", "list")
    assert listed.returncode == 0, listed.stderr
    statuses = {line.split()[0]: line.split()[2] for line in listed.stdout.splitlines()[1:]}
    assert statuses == {waiting.id: "Waiting", failed: "Failed"}
    for asked in ("waiting", "Waiting", "PENDING", "pending"):
        chosen = run_san("jobs", "list", "--status", asked, "--json")
        assert chosen.returncode == 0, chosen.stderr
        assert [job["id"] for job in json.loads(chosen.stdout)] == [waiting.id]
        assert json.loads(chosen.stdout)[0]["status"] == "PENDING"  # --json keeps the stored name
    unknown = run_san("jobs", "list", "--status", "queued")
    assert unknown.returncode == 2
    assert "unknown status 'queued'; one of: waiting, running, completed, failed, cancelled" in unknown.stderr
    assert "Status:     Failed (FAILED)" in run_san("jobs", "show", failed).stdout
