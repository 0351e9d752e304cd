"""``san jobs retry|cancel`` by ids and in bulk, ``san jobs failures`` and ``san jobs pause|resume``, in child
processes on the test's data directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings, insert_jobs
from tests.support.local_http import serving
from tests.support.processes import run_san

UNKNOWN = "01a00000-0000-7000-8000-000000000000"


class _CardsFailHandler(BaseHTTPRequestHandler):
    """An OpenAI-shaped server that answers 500 to every request but a scrap's clean-up (which it echoes):
    each capture makes a CARD_ANALYSIS and a SCRAP_REFINE job, and only the first kind is to fail here."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        payload: dict[str, Any]
        if schema == "refined_scrap":
            content = json.dumps({"refined": body["messages"][-1]["content"]})
            message = {"role": "assistant", "content": content, "refusal": None}
            status, payload = 200, {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        else:
            status, payload = 500, {"error": {"message": "The server had an error"}}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def _server_failing_card_analysis() -> Iterator[str]:
    with serving(_CardsFailHandler) as port:
        yield f"http://127.0.0.1:{port}/v1"


def _jobs(*filters: str) -> list[dict[str, Any]]:
    listed = run_san("jobs", "list", "--limit", "1000", "--json", *filters)
    assert listed.returncode == 0, listed.stderr
    jobs: list[dict[str, Any]] = json.loads(listed.stdout)
    return jobs


def _failure_groups(*filters: str) -> list[dict[str, Any]]:
    shown = run_san("jobs", "failures", "--json", *filters)
    assert shown.returncode == 0, shown.stderr
    groups: list[dict[str, Any]] = json.loads(shown.stdout)
    return groups


def _statuses(queue: JobStore, ids: list[str]) -> list[JobStatus]:
    return [queue.get(job_id).status for job_id in ids]


def test_twenty_jobs_failed_by_a_server_answering_500_are_one_group_and_retried_at_once(data_dir: Path) -> None:
    with _server_failing_card_analysis() as url:
        data_dir.mkdir(parents=True, exist_ok=True)
        settings = {
            "ai": {"provider": "openai", "base_url": url, "chat_model": "m", "embedding_model": "e"},
            # one attempt each (a 500 is transient, retried otherwise), and no breaker pause on the way
            "jobs": {"max_attempts": 1, "breaker_failure_threshold": 1000, "poll_interval_seconds": 0.1},
        }
        (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        for n in range(20):
            added = run_san("scrap", "add", "--text", f"Scrap {n}: what an HTTP 500 taught today.")
            assert added.returncode == 0, added.stderr
        ran = run_san("jobs", "run", "--until-idle", "--timeout", "120")
        assert ran.returncode == 0, ran.stderr

    failed = _jobs("--status", "failed")
    assert len(failed) == 20
    assert {job["job_type"] for job in failed} == {"CARD_ANALYSIS"}
    assert all("500" in job["error_message"] for job in failed)
    assert len(_jobs("--status", "completed", "--type", "scrap_refine")) == 20  # only the cards failed

    groups = _failure_groups()
    assert len(groups) == 1
    group = groups[0]
    assert set(group) == {"signature", "count", "first_seen", "last_seen", "example", "job_types", "kinds"}
    assert group["count"] == 20
    assert group["job_types"] == ["CARD_ANALYSIS"]
    assert "HTTP 500 Internal Server Error" in group["example"]
    assert "Internal Server Error" in group["signature"]
    assert group["signature"].startswith("HTTP 500 Internal Server Error from <url>")  # the status stays,
    assert "127.0.0.1" not in group["signature"]  # the server's address is masked
    assert datetime.fromisoformat(group["first_seen"]) <= datetime.fromisoformat(group["last_seen"])
    table = run_san("jobs", "failures")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split() == ["COUNT", "TYPES", "FIRST", "SEEN", "LAST", "SEEN", "SIGNATURE"]
    assert table.stdout.splitlines()[1].split()[:2] == ["20", "CARD_ANALYSIS"]

    retried = run_san("jobs", "retry", "--failed")
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout == "20 job(s) queued again.\n"

    pending = _jobs("--status", "pending")
    assert sorted(job["id"] for job in pending) == sorted(job["id"] for job in failed)
    assert all(job["attempts"] == 1 and job["max_attempts"] == 2 for job in pending)  # one fresh attempt each
    assert _failure_groups() == []
    assert run_san("jobs", "failures").stdout == "No failed jobs.\n"


def test_retry_and_cancel_by_ids_go_on_past_an_unknown_id(db: Database) -> None:
    queue = JobStore(db, fast_settings())
    failed = insert_jobs(queue, 2)
    waiting = insert_jobs(queue, 2, status=JobStatus.PENDING, target=lambda n: f"waiting-{n}")

    retried = run_san("jobs", "retry", failed[0], UNKNOWN, failed[1])
    assert retried.returncode == 1
    assert f"san: There is no job with id {UNKNOWN}." in retried.stderr
    assert "1 of 3 jobs could not be retried" in retried.stderr
    for job_id in failed:
        assert f"Job {job_id} queued again (3 of 4 attempts used)." in retried.stdout
    assert _statuses(queue, failed) == [JobStatus.PENDING, JobStatus.PENDING]

    cancelled = run_san("jobs", "cancel", UNKNOWN, *waiting)
    assert cancelled.returncode == 1
    assert f"There is no job with id {UNKNOWN}." in cancelled.stderr
    assert cancelled.stdout.splitlines() == [f"Job {job_id} cancelled." for job_id in waiting]
    assert _statuses(queue, waiting) == [JobStatus.CANCELLED, JobStatus.CANCELLED]

    # a job in a state the action does not apply to is named, and the others are still done
    mixed = run_san("jobs", "cancel", waiting[0], failed[0])
    assert mixed.returncode == 1
    assert f"Job {waiting[0]} is CANCELLED; only waiting or running jobs can be cancelled." in mixed.stderr
    assert mixed.stdout == f"Job {failed[0]} cancelled.\n"

    all_done = run_san("jobs", "retry", *waiting, waiting[0])  # a repeated id counts once
    assert all_done.returncode == 0, all_done.stderr
    assert len(all_done.stdout.splitlines()) == 2
    assert _statuses(queue, waiting) == [JobStatus.PENDING, JobStatus.PENDING]

    # one id alone keeps its own exit code (5: no such job), as before
    alone = run_san("jobs", "retry", UNKNOWN)
    assert alone.returncode == 5
    assert alone.stderr == f"san: There is no job with id {UNKNOWN}.\n"


def test_cancel_waiting_takes_only_waiting_jobs_of_the_types_given(db: Database) -> None:
    queue = JobStore(db, fast_settings())
    running = queue.enqueue(JobType.CARD_ANALYSIS, "running-scrap")
    assert queue.claim_next(start_session(db, "gui"), JobPool.AI, {JobType.CARD_ANALYSIS}) is not None
    cards = insert_jobs(queue, 3, status=JobStatus.PENDING)
    refines = insert_jobs(queue, 2, status=JobStatus.PENDING, job_type=JobType.SCRAP_REFINE)
    failed = insert_jobs(queue, 1, target=lambda n: f"failed-{n}")

    cancelled = run_san("jobs", "cancel", "--waiting", "--type", "card_analysis")
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout == "3 waiting job(s) cancelled.\n"
    assert set(_statuses(queue, cards)) == {JobStatus.CANCELLED}
    assert set(_statuses(queue, refines)) == {JobStatus.PENDING}
    assert queue.get(running.id).status is JobStatus.PROCESSING  # running jobs are not "waiting"
    assert _statuses(queue, failed) == [JobStatus.FAILED]

    again = run_san("jobs", "cancel", "--waiting", "--type", "CARD_ANALYSIS")
    assert again.returncode == 0
    assert again.stdout == "No waiting jobs match.\n"

    every = run_san("jobs", "cancel", "--waiting")
    assert every.stdout == "2 waiting job(s) cancelled.\n"
    assert set(_statuses(queue, refines)) == {JobStatus.CANCELLED}
    assert queue.get(running.id).status is JobStatus.PROCESSING


def test_retry_failed_is_narrowed_by_type_and_error_text(db: Database) -> None:
    queue = JobStore(db, fast_settings())
    timeouts = insert_jobs(queue, 3, error="TransientError: read timed out after 120 s")
    server = insert_jobs(queue, 2, error="TransientError: AI server answered 500", target=lambda n: f"server-{n}")
    commits = insert_jobs(
        queue, 2, job_type=JobType.TIL_GITHUB_COMMIT, error="TransientError: read timed out", target=lambda n: f"c{n}"
    )
    cancelled = insert_jobs(queue, 1, status=JobStatus.CANCELLED, target=lambda n: f"cancelled-{n}")
    # the same work failed once and is queued again already: that failure is left as it is
    duplicate = insert_jobs(queue, 1, error="TransientError: AI server answered 500", target=lambda n: "dup")
    insert_jobs(queue, 1, status=JobStatus.PENDING, target=lambda n: "dup")

    narrowed = run_san("jobs", "retry", "--failed", "--type", "card_analysis", "--error-contains", "timed out")
    assert narrowed.returncode == 0, narrowed.stderr
    assert narrowed.stdout == "3 job(s) queued again.\n"
    assert set(_statuses(queue, timeouts)) == {JobStatus.PENDING}
    assert set(_statuses(queue, server + commits + duplicate)) == {JobStatus.FAILED}

    by_text = run_san("jobs", "retry", "--failed", "--error-contains", "answered 500")
    assert by_text.returncode == 0, by_text.stderr
    assert by_text.stdout == "2 job(s) queued again.\n1 skipped (another run of the same work is queued).\n"
    assert set(_statuses(queue, server)) == {JobStatus.PENDING}
    assert _statuses(queue, duplicate) == [JobStatus.FAILED]

    nothing = run_san("jobs", "retry", "--failed", "--type", "til_generation")
    assert nothing.returncode == 0
    assert nothing.stdout == "No failed jobs match.\n"
    assert set(_statuses(queue, commits)) == {JobStatus.FAILED}
    assert _statuses(queue, cancelled) == [JobStatus.CANCELLED]  # --failed: failed jobs only


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["retry"], "one of the arguments ID --failed is required"),
        (["retry", UNKNOWN, "--failed"], "not allowed with argument"),
        (["retry", "--failed", UNKNOWN], "not allowed with argument"),
        (["retry", UNKNOWN, "--type", "card_analysis"], "--type and --error-contains go with --failed"),
        (["retry", UNKNOWN, "--error-contains", "500"], "--type and --error-contains go with --failed"),
        (["retry", "--failed", "--type", "sleeping"], "unknown job type 'sleeping'"),
        (["cancel"], "one of the arguments ID --waiting is required"),
        (["cancel", "--waiting", UNKNOWN], "not allowed with argument"),
        (["cancel", UNKNOWN, "--type", "card_analysis"], "--type goes with --waiting"),
        (["failures", "--type", "sleeping"], "unknown job type 'sleeping'"),
        (["pause"], "the following arguments are required: POOL"),
        (["resume", "gpu"], "unknown pool 'gpu'; one of: ai, github"),
    ],
)
def test_ids_and_bulk_options_are_exclusive_usage_errors(args: list[str], message: str, data_dir: Path) -> None:
    refused = run_san("jobs", *args)
    assert refused.returncode == 2
    assert message in refused.stderr
    assert "usage: san jobs" in refused.stderr
    assert not data_dir.exists()  # refused before anything was opened


def test_failures_table_cuts_long_signatures_and_says_when_there_are_none(db: Database) -> None:
    queue = JobStore(db, fast_settings())
    empty = run_san("jobs", "failures")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout == "No failed jobs.\n"
    assert _failure_groups() == []

    # recorded as an older version did, with the class name: the table shows the sentence alone
    insert_jobs(queue, 3, error=lambda n: f"TransientError: HTTP 500 from http://127.0.0.1:{8000 + n}/v1: error {n}")
    long_error = "The repository refused the commit because " + "it was far too long " * 10
    insert_jobs(queue, 1, job_type=JobType.TIL_GITHUB_COMMIT, error=long_error, target=lambda n: f"commit-{n}")

    lines = run_san("jobs", "failures").stdout.splitlines()
    assert len(lines) == 3
    assert lines[1].split()[:2] == ["3", "CARD_ANALYSIS"]
    assert lines[1].endswith("  HTTP 500 from <url>: error #")
    assert lines[2].split()[:2] == ["1", "TIL_GITHUB_COMMIT"]
    assert lines[2].endswith("...")
    assert len(lines[2]) < len(long_error)

    commits = _failure_groups("--type", "til_github_commit")
    assert [(group["count"], group["job_types"]) for group in commits] == [(1, ["TIL_GITHUB_COMMIT"])]
    assert commits[0]["signature"] == long_error.strip()  # whole in JSON
    assert commits[0]["example"] == long_error


def test_pause_and_resume_are_remembered_and_a_paused_pool_does_not_keep_a_run_going(
    db: Database, data_dir: Path
) -> None:
    queue = JobStore(db, fast_settings())
    job = queue.enqueue(JobType.CARD_ANALYSIS, "no-such-scrap")

    def jobs_settings() -> dict[str, Any]:
        saved: dict[str, Any] = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))["jobs"]
        return saved

    paused = run_san("jobs", "pause", "ai")
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.startswith("AI pool paused: no new AI jobs start until `san jobs resume ai`")
    assert (jobs_settings()["ai_paused"], jobs_settings()["github_paused"]) == (True, False)
    assert run_san("jobs", "pause", "AI").stdout == "AI pool was paused already.\n"

    ran = run_san("jobs", "run", "--until-idle", "--timeout", "60")
    assert ran.returncode == 0, ran.stderr  # 124 would mean the paused pool kept it running
    assert "Nothing left to run" in ran.stderr
    assert "1 AI job(s) wait while the AI pool is paused; `san jobs resume ai` lets them run." in ran.stderr
    assert queue.get(job.id).status is JobStatus.PENDING
    assert queue.get(job.id).attempts == 0

    github = run_san("jobs", "pause", "github")
    assert github.stdout.startswith("GitHub & web pool paused")
    assert (jobs_settings()["ai_paused"], jobs_settings()["github_paused"]) == (True, True)

    resumed = run_san("jobs", "resume", "ai")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("AI pool resumed")
    assert (jobs_settings()["ai_paused"], jobs_settings()["github_paused"]) == (False, True)
    assert run_san("jobs", "resume", "ai").stdout == "AI pool was running already.\n"

    ran_again = run_san("jobs", "run", "--until-idle", "--timeout", "60")
    assert ran_again.returncode == 0, ran_again.stderr
    assert "paused" not in ran_again.stderr  # the GitHub pool is paused, but nothing waits there
    assert queue.get(job.id).status is JobStatus.FAILED  # it ran: its scrap does not exist
