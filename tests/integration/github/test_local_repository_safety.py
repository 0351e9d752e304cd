"""Committing to the user's own git repository never harms it (issue 23, items 1-5 and 17): no damaged
object, none of the user's files replaced, no branch a work tree has checked out, no branch git would
not name so, and a clear state for a read-only or locked repository. Each case checked with the real
``git``: ``git fsck --full --strict`` clean, and the work trees, index and other refs byte-identical."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import CommitStatus, ErrorKind, JobStatus, JobType
from san_desktop.core.errors import PermanentError, SanError
from san_desktop.core.settings import GitHubSettings
from san_desktop.db.models import TilCommit
from san_desktop.github.local_git import commit_file
from san_desktop.jobs.classify import classify
from tests.support.git_repo import (
    branch_files,
    commit_on_branch,
    file_on,
    git,
    unharmed,
    user_repository,
)
from tests.support.processes import run_san
from tests.support.til import finished_til, run_one, til_text

BRANCH = "til"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return user_repository(tmp_path / "my-til")


@pytest.fixture
def day(app: SanApp, repo: Path) -> str:
    app.save_settings(
        replace(app.settings, github=GitHubSettings(target="local", local_repository=str(repo), local_branch=BRANCH))
    )
    return finished_til(app)


def _commit(app: SanApp, day: str, path: str | None = None) -> tuple[JobStatus, str]:
    """Request and run a commit, checked to leave the repository unharmed (fsck clean; the user's files,
    index, HEAD, config and other refs byte-identical)."""
    github = app.settings.github
    with unharmed(Path(github.local_repository), github.local_branch):
        app.commit_til(day, path=path)
        job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    return job.status, job.error_message or ""


# --- 1. no damaged object ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("a//b.md", "empty part"),
        ("TIL/\x00x.md", "control character"),
        ("../../x.md", "'..' part"),
        (".git/hooks/pre-commit", "git's own folder"),
        (".GIT/config", "git's own folder"),
    ],
)
def test_a_path_git_would_call_damaged_is_refused_before_anything_is_written(
    app: SanApp, repo: Path, day: str, path: str, why: str
) -> None:
    with unharmed(repo, BRANCH), pytest.raises(SanError, match=why):
        app.commit_til(day, path=path)
    assert app.commits.list(day) == []
    assert git(repo, "branch", "--list", BRANCH).stdout == ""  # no branch, no tree


def test_the_command_line_refuses_it_with_a_sentence(app: SanApp, repo: Path, day: str) -> None:
    with unharmed(repo, BRANCH):
        result = run_san("til", "commit", day, "--target", "local", "--path", "a//b.md")
    assert result.returncode == 1
    assert "has an empty part (two slashes in a row)" in result.stderr
    assert "Traceback" not in result.stderr
    assert git(repo, "branch", "--list", BRANCH).stdout == ""


def test_a_request_stored_with_a_bad_path_is_refused_by_the_job_too(app: SanApp, repo: Path, day: str) -> None:
    """A request recorded before these rules (or by hand) never reaches the repository."""
    info = app.commit_til(day).value
    with app.backend.db.write() as session:
        session.execute(sa.update(TilCommit).where(TilCommit.id == info.id).values(path="TIL//x.md"))
    with unharmed(repo, BRANCH):
        job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "has an empty part" in (job.error_message or "")
    assert git(repo, "branch", "--list", BRANCH).stdout == ""


# --- 2. none of the user's files replaced -------------------------------------------------------------


def test_a_file_the_user_made_at_the_path_is_kept_and_the_til_takes_the_next_name(
    app: SanApp, repo: Path, day: str
) -> None:
    planned = app.commits.plan(day).path
    git(repo, "branch", BRANCH)
    commit_on_branch(repo, BRANCH, planned, b"my own note, not SAN's\n")

    status, error = _commit(app, day)

    assert status is JobStatus.COMPLETED, error
    (request,) = app.commits.list(day)
    assert request.path == planned.removesuffix(".md") + "-1.md"
    assert file_on(repo, BRANCH, planned) == b"my own note, not SAN's\n"
    assert file_on(repo, BRANCH, request.path) == til_text(app, day).encode()


def test_a_folder_at_the_path_is_kept_whole(app: SanApp, repo: Path, day: str) -> None:
    git(repo, "branch", BRANCH)  # holds TIL/keep.md
    status, error = _commit(app, day, path="TIL")
    assert status is JobStatus.COMPLETED, error
    (request,) = app.commits.list(day)
    assert request.path == "TIL-1"
    assert "TIL/keep.md" in branch_files(repo, BRANCH)
    assert file_on(repo, BRANCH, "TIL/keep.md") == b"# a note I wrote myself\n"


def test_a_path_below_a_file_fails_with_a_sentence(app: SanApp, repo: Path, day: str) -> None:
    git(repo, "branch", BRANCH)
    status, error = _commit(app, day, path="TIL/keep.md/x.md")
    assert status is JobStatus.FAILED
    assert "TIL/keep.md is a file on the branch til" in error
    assert "AssertionError" not in error
    assert branch_files(repo, BRANCH) == ["README.md", "TIL/keep.md"]


def test_a_new_version_replaces_sans_own_file_but_not_one_the_user_edited_since(
    app: SanApp, repo: Path, day: str
) -> None:
    assert _commit(app, day)[0] is JobStatus.COMPLETED
    (first,) = app.commits.list(day)
    app.save_til_edit(day, til_text(app, day) + "\nSecond version.\n")
    assert _commit(app, day)[0] is JobStatus.COMPLETED
    second = app.commits.list(day)[-1]
    assert second.path == first.path  # SAN's own file, as SAN wrote it: replaced by the new version
    assert file_on(repo, BRANCH, first.path) == til_text(app, day).encode()

    commit_on_branch(repo, BRANCH, first.path, b"I fixed a typo here on the branch\n")
    app.save_til_edit(day, til_text(app, day) + "\nThird version.\n")
    assert _commit(app, day)[0] is JobStatus.COMPLETED
    third = app.commits.list(day)[-1]
    assert third.path == first.path.removesuffix(".md") + "-1.md"
    assert file_on(repo, BRANCH, first.path) == b"I fixed a typo here on the branch\n"


# --- 3. a branch checked out in any work tree ----------------------------------------------------


def test_a_branch_checked_out_in_a_linked_worktree_is_refused(app: SanApp, repo: Path, day: str) -> None:
    linked = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(linked), "-b", BRANCH)
    worktrees = git(repo, "worktree", "list", "--porcelain").stdout

    with unharmed(linked, BRANCH):
        status, error = _commit(app, day)

    assert status is JobStatus.FAILED
    assert f"The branch til is checked out in {linked}" in error
    assert git(linked, "status", "--porcelain").stdout == ""  # no "D TIL/…" staged there
    assert git(repo, "worktree", "list", "--porcelain").stdout == worktrees


def test_from_a_linked_worktree_the_main_checkout_counts_too(app: SanApp, repo: Path, day: str) -> None:
    linked = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "elsewhere")
    settings = GitHubSettings(target="local", local_repository=str(linked), local_branch="main")
    app.save_settings(replace(app.settings, github=settings))
    status, error = _commit(app, day)
    assert status is JobStatus.FAILED
    assert f"The branch main is checked out in {repo}" in error


def test_a_bare_repository_takes_commits(app: SanApp, repo: Path, day: str, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    settings = GitHubSettings(target="local", local_repository=str(bare), local_branch="main")
    app.save_settings(replace(app.settings, github=settings))
    status, error = _commit(app, day)
    assert status is JobStatus.COMPLETED, error
    (request,) = app.commits.list(day)
    assert file_on(bare, "main", request.path) == til_text(app, day).encode()


@pytest.mark.parametrize(
    ("folder", "said"),
    [("plain", "is not a git repository"), ("missing", "does not exist")],
)
def test_a_folder_that_is_no_repository_says_what_it_is(
    app: SanApp, day: str, tmp_path: Path, folder: str, said: str
) -> None:
    if folder == "plain":
        (tmp_path / folder).mkdir()
    settings = GitHubSettings(target="local", local_repository=str(tmp_path / folder), local_branch=BRANCH)
    app.save_settings(replace(app.settings, github=settings))
    with pytest.raises(SanError, match=f"{tmp_path / folder} {said}"):
        app.commit_til(day)


# --- 4. branch names git accepts ---------------------------------------------------------------------


@pytest.mark.parametrize("branch", ["HEAD", "../../config", "til.lock", "a b"])
def test_a_branch_name_git_would_not_accept_is_refused_where_it_is_set(repo: Path, branch: str) -> None:
    result = run_san("config", "set", "github.local_branch", branch)
    assert result.returncode != 0
    assert "github.local_branch: The branch name" in result.stderr
    assert "Traceback" not in result.stderr
    assert "RefFormatError" not in result.stderr
    assert not (repo / ".git" / "refs" / "heads" / "HEAD").exists()


def test_the_committer_refuses_a_bad_branch_name_with_a_sentence(repo: Path) -> None:
    with unharmed(repo, "HEAD"):
        for branch in ("HEAD", "../../config"):
            with pytest.raises(PermanentError, match="The branch name") as refused:
                commit_file(repo, branch, "TIL/x.md", b"x", "docs: add TIL")
            assert "RefFormatError" not in str(refused.value)
    assert git(repo, "rev-parse", "--symbolic-full-name", "HEAD").stdout.strip() == "refs/heads/main"
    assert git(repo, "rev-parse", "HEAD").returncode == 0
    assert "ambiguous" not in git(repo, "rev-parse", "HEAD").stderr


# --- 5. a read-only or locked repository ----------------------------------------------------------


def test_a_stale_ref_lock_is_retried_then_fails_saying_which_file_to_delete(app: SanApp, repo: Path, day: str) -> None:
    git(repo, "branch", BRANCH)
    lock = repo / ".git" / "refs" / "heads" / f"{BRANCH}.lock"
    lock.write_text("", encoding="utf-8")

    with unharmed(repo, BRANCH):
        app.commit_til(day)
        first = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert first.status is JobStatus.PENDING, first.error_message  # another git may be running now: again later
    assert "locked by another git program" in (first.error_message or "")
    for _ in range(first.max_attempts - 1):
        last = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert last.status is JobStatus.FAILED
    assert f"({lock} exists)" in (last.error_message or "")
    assert "If no git program is running, delete that file" in (last.error_message or "")
    assert "FileLocked" not in (last.error_message or "")
    (request,) = app.commits.list(day)
    assert request.status is CommitStatus.FAILED
    lock.unlink()  # what the message says to do; then a retry commits
    app.retry_job(last.id)
    assert run_one(app, JobType.TIL_GITHUB_COMMIT).status is JobStatus.COMPLETED


@pytest.fixture
def read_only_repo(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mount_point = tmp_path / "ro"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount_point)], check=True)
    try:
        repo = user_repository(mount_point / "my-til")
        subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
        yield repo
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_a_read_only_repository_fails_once_with_what_to_do(app: SanApp, read_only_repo: Path) -> None:
    settings = GitHubSettings(target="local", local_repository=str(read_only_repo), local_branch=BRANCH)
    app.save_settings(replace(app.settings, github=settings))
    day = finished_til(app)
    with pytest.raises(OSError, match="Read-only file system") as probe:  # it really is read-only
        (read_only_repo / "probe").write_bytes(b"")
    assert probe.value.errno == errno.EROFS

    status, error = _commit(app, day)

    assert status is JobStatus.FAILED  # not waited on forever as if the disk were full
    said, *_causes = error.split(" <- ")  # the sentence, then the cause chain
    assert "mounted without write access" in said
    assert "then retry the commit" in said
    assert "OSError" not in said
    try:
        commit_file(read_only_repo, BRANCH, "TIL/x.md", b"x", "docs: add TIL")
    except Exception as exc:
        assert classify(exc).kind is ErrorKind.PERMANENT
        assert classify(exc).retry_after is None
    else:
        pytest.fail("a commit to a read-only repository succeeded")
