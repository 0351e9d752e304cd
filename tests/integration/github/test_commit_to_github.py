"""Committing a TIL to a GitHub-shaped server on 127.0.0.1: every answer GitHub can give ends in the right
state with the right message; rate limits spend no attempt; the token is nowhere."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import CommitStatus, ErrorKind, JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.logging_setup import setup_logging
from san_desktop.core.settings import GitHubSettings
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.jobs import jobs_of
from tests.support.processes import child_env, run_python
from tests.support.til import finished_til, run_one


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_github_server() as fake:
        yield fake


@pytest.fixture
def day(app: SanApp, github: FakeGitHub) -> str:
    settings = replace(app.settings, github=GitHubSettings(api_url=github.url, repository="me/til", branch="main"))
    app.save_settings(settings)
    app.connections.set_github_token(TOKEN)
    return finished_til(app)


def _commit(app: SanApp, day: str) -> tuple[str, JobStatus]:
    info = app.commit_til(day).value
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    return info.id, job.status


def test_a_til_is_committed_with_base64_content_message_and_branch(app: SanApp, github: FakeGitHub, day: str) -> None:
    _request_id, status = _commit(app, day)
    assert status is JobStatus.COMPLETED
    (request,) = app.commits.list(day)
    assert request.status is CommitStatus.COMPLETED
    assert request.commit_sha == github.commits[0]["sha"]
    assert request.html_url == github.commits[0]["html_url"]
    (put,) = github.writes()
    assert put.body is not None
    view = app.til.get(day)
    assert base64.b64decode(put.body["content"]).decode() == view.markdown
    assert put.body["message"] == f"docs: add TIL - {view.title}"
    assert put.body["branch"] == "main"
    assert "sha" not in put.body  # a new file
    assert put.path == f"/repos/me/til/contents/{request.path}"
    assert request.path.startswith(f"TIL/{day[:4]}/{day[5:7]}/{day[8:]}/")
    assert all(r.headers.get("X-GitHub-Api-Version") == "2022-11-28" for r in github.requests)
    (job,) = jobs_of(app.queue, JobType.TIL_GITHUB_COMMIT)
    assert app.job_labels([job]) == {job.target_id: f"TIL of {day} to me/til"}  # as the job monitor names it


def test_the_same_text_twice_is_refused_before_enqueue(app: SanApp, github: FakeGitHub, day: str) -> None:
    _commit(app, day)
    with pytest.raises(SanError, match=r"was already committed to GitHub me/til \(branch main\) at TIL/"):
        app.commit_til(day)
    assert len(jobs_of(app.queue, JobType.TIL_GITHUB_COMMIT)) == 1


def test_a_taken_path_gets_a_suffix(app: SanApp, github: FakeGitHub, day: str) -> None:
    planned = app.commits.plan(day).path
    github.files[("main", planned)] = b"someone else's note"
    _commit(app, day)
    (request,) = app.commits.list(day)
    assert request.path == planned.removesuffix(".md") + "-1.md"
    assert github.files[("main", planned)] == b"someone else's note"  # never overwritten


@pytest.mark.parametrize(
    ("behaviour", "status", "kind", "spent", "message"),
    [
        ("401", JobStatus.FAILED, ErrorKind.PERMANENT, 1, "GitHub rejected the token"),
        ("422", JobStatus.FAILED, ErrorKind.PERMANENT, 1, '"content" wasn\'t supplied'),
        ("409", JobStatus.PENDING, ErrorKind.TRANSIENT, 1, "the branch moved"),
        ("500", JobStatus.PENDING, ErrorKind.TRANSIENT, 1, "GitHub answered 500"),
        ("ratelimit", JobStatus.PENDING, ErrorKind.TRANSIENT, 0, "rate limit used up"),
        ("ratelimit-twice", JobStatus.PENDING, ErrorKind.TRANSIENT, 0, "rate limit used up"),
        ("secondary", JobStatus.PENDING, ErrorKind.TRANSIENT, 0, "secondary rate limit"),
    ],
)
def test_each_answer_ends_in_the_right_state(
    app: SanApp,
    github: FakeGitHub,
    day: str,
    behaviour: str,
    status: JobStatus,
    kind: ErrorKind,
    spent: int,
    message: str,
) -> None:
    github.next_put = [behaviour]
    app.commit_til(day)
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is status
    assert job.error_kind is kind
    assert job.attempts == spent  # waiting out a rate limit spends no attempt
    assert message in (job.error_message or "")
    (request,) = app.commits.list(day)
    assert request.status is (CommitStatus.FAILED if status is JobStatus.FAILED else CommitStatus.PROCESSING)
    if behaviour in ("ratelimit", "ratelimit-twice", "secondary"):
        assert job.run_after is not None
        assert (job.run_after - app.queue.clock()).total_seconds() > 20
    if status is JobStatus.PENDING:  # and the next attempt goes through
        job = run_one(app, JobType.TIL_GITHUB_COMMIT)
        assert job.status is JobStatus.COMPLETED
        assert len(github.commits) == 1


def test_a_missing_branch_is_named(app: SanApp, github: FakeGitHub, day: str) -> None:
    app.save_settings(replace(app.settings, github=replace(app.settings.github, branch="til")))
    app.commit_til(day)
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "The branch til does not exist in me/til" in (job.error_message or "")


def test_checks_before_enqueue_say_what_to_do(app: SanApp, github: FakeGitHub) -> None:
    with pytest.raises(SanError, match="has no text yet"):
        app.commit_til("2020-01-01")
    day = finished_til(app)
    with pytest.raises(SanError, match="No GitHub repository is set"):
        app.commit_til(day)
    app.save_settings(replace(app.settings, github=GitHubSettings(api_url=github.url, repository="me/til")))
    with pytest.raises(SanError, match=r"No GitHub token: enter it in Settings .* or set GH_TOKEN"):
        app.commit_til(day)


def test_the_token_is_in_no_file_log_or_error(app: SanApp, github: FakeGitHub, day: str) -> None:
    setup_logging(app.data_dir, stderr=False)
    github.next_put = ["401"]
    app.commit_til(day)
    run_one(app, JobType.TIL_GITHUB_COMMIT)
    written = b"".join(path.read_bytes() for path in sorted(app.data_dir.rglob("*")) if path.is_file())
    assert b"GitHub rejected the token" in written  # the failure is recorded...
    assert TOKEN.encode() not in written  # ...without the token, in the database, its WAL and the logs
    for job in jobs_of(app.queue):
        for attempt in app.queue.attempts(job.id):
            assert TOKEN not in (attempt.error_text or "")


def test_the_command_line_commits_and_says_where_the_token_comes_from(
    app: SanApp, github: FakeGitHub, day: str
) -> None:
    environment = child_env(GH_TOKEN=TOKEN)  # a child has no keyring: the token comes from the environment
    doctor = json.loads(run_python(["-m", "san_desktop.cli.main", "doctor", "--json"], env=environment).stdout)
    assert doctor["github_token_source"] == "GH_TOKEN"
    planned = app.commits.plan(day).path
    github.files[("main", planned)] = b"someone else's note"
    dry = run_python(["-m", "san_desktop.cli.main", "til", "commit", day, "--dry-run"], env=environment)
    assert dry.returncode == 0, dry.stderr
    assert "to GitHub me/til (branch main)" in dry.stdout
    assert f"path:    {planned.removesuffix('.md')}-1.md" in dry.stdout  # looked at as the job will look
    assert f"({planned} exists, and SAN Desktop never replaces a file it did not write)" in dry.stdout
    assert "docs: add TIL - " in dry.stdout
    assert app.commits.list(day) == []  # a dry run records nothing
    tested = run_python(["-m", "san_desktop.cli.main", "github", "test"], env=environment)
    assert tested.returncode == 0, tested.stderr
    assert "OK: tester can push to me/til (main). (token from GH_TOKEN)" in tested.stdout
    refused = run_python(["-m", "san_desktop.cli.main", "github", "test"], env=child_env(GH_TOKEN="wrong-token-123456"))
    assert refused.returncode == 1
    assert "GitHub rejected the token" in refused.stderr
    assert "wrong-token-123456" not in refused.stderr


def test_a_missing_repository_is_named(app: SanApp, github: FakeGitHub, day: str) -> None:
    app.save_settings(replace(app.settings, github=replace(app.settings.github, repository="me/elsewhere")))
    app.commit_til(day)
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "The repository me/elsewhere does not exist, or the token cannot see it" in (job.error_message or "")


def test_a_cancelled_commit_does_not_block_the_next_one(app: SanApp, github: FakeGitHub, day: str) -> None:
    first = app.commit_til(day)
    (job,) = jobs_of(app.queue, JobType.TIL_GITHUB_COMMIT)
    app.cancel_job(job.id)
    second = app.commit_til(day).value  # not "is being committed": the first will never run
    assert second.id != first.value.id
    assert run_one(app, JobType.TIL_GITHUB_COMMIT).status is JobStatus.COMPLETED


def test_a_rate_limit_too_long_to_wait_on_the_last_attempt_fails_the_request_with_its_job(
    app: SanApp, github: FakeGitHub, day: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request follows what the queue decides (``JobStore.outcome_of``): it was left PROCESSING beside a
    FAILED job when the commit guessed from the rate limit alone."""
    settings = replace(app.queue.settings, max_attempts=1, max_rate_limit_wait_seconds=1.0)
    monkeypatch.setattr(app.queue, "settings", settings)
    github.next_put = ["ratelimit"]
    app.commit_til(day)
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "rate limit used up" in (job.error_message or "")
    (request,) = app.commits.list(day)
    assert request.status is CommitStatus.FAILED
