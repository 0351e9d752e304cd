"""Committing a TIL to a local git repository with dulwich: only the TIL file goes into the commit, and
the user's modified, staged and untracked files stay exactly as they were."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from dulwich import porcelain
from dulwich.objects import Blob, Commit, ShaFile, Tree
from dulwich.refs import HEADREF, Ref
from dulwich.repo import Repo

from san_desktop.app import SanApp
from san_desktop.core.enums import CommitStatus, CommitTarget, JobStatus, JobType
from san_desktop.core.settings import GitHubSettings
from tests.support.git_repo import unharmed
from tests.support.til import finished_til, run_one

T = TypeVar("T", bound=ShaFile)


def _as(kind: type[T], item: ShaFile) -> T:
    assert isinstance(item, kind)
    return item


def _status(path: Path) -> tuple[object, ...]:
    status = porcelain.status(str(path))
    return (sorted(status.staged.get("add", [])), sorted(status.staged.get("modify", [])),
            sorted(status.unstaged), sorted(status.untracked))  # fmt: skip


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    """A clone as people have them: a commit, a modified file, a staged one and an untracked one."""
    path = tmp_path / "my-til"
    repo = Repo.init(str(path), mkdir=True)
    (path / "README.md").write_text("my notes\n", encoding="utf-8")
    porcelain.add(repo, [str(path / "README.md")])
    porcelain.commit(repo, message=b"start", author=b"Me <me@example.org>", committer=b"Me <me@example.org>")
    (path / "README.md").write_text("my notes, edited\n", encoding="utf-8")
    (path / "staged.md").write_text("staged\n", encoding="utf-8")
    porcelain.add(repo, [str(path / "staged.md")])
    (path / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    repo.close()
    return path


def test_only_the_til_file_is_committed_and_the_working_state_is_untouched(app: SanApp, user_repo: Path) -> None:
    settings = GitHubSettings(target="local", local_repository=str(user_repo), local_branch="til")
    app.save_settings(replace(app.settings, github=settings))
    day = finished_til(app)
    before = _status(user_repo)
    readme = (user_repo / "README.md").read_bytes()

    with unharmed(user_repo, "til"):  # git fsck --full --strict clean; all but the branch byte-identical
        info = app.commit_til(day).value
        job = run_one(app, JobType.TIL_GITHUB_COMMIT)

    assert job.status is JobStatus.COMPLETED, job.error_message
    (request,) = app.commits.list(day)
    assert request.status is CommitStatus.COMPLETED
    assert request.target is CommitTarget.LOCAL
    assert _status(user_repo) == before  # modified, staged, untracked: as they were
    assert (user_repo / "README.md").read_bytes() == readme
    assert not (user_repo / info.path).exists()  # not in the working tree: only in the branch
    with Repo(str(user_repo)) as repo:
        tip = _as(Commit, repo[repo.refs[Ref(b"refs/heads/til")]])
        assert tip.id.decode() == request.commit_sha
        assert tip.message.decode() == f"docs: add TIL - {app.til.get(day).title}"
        assert len(tip.parents) == 1
        tree = _as(Tree, repo[tip.tree])
        _mode, sha = tree.lookup_path(repo.__getitem__, info.path.encode())
        assert _as(Blob, repo[sha]).data.decode() == app.til.get(day).markdown
        parent_tree = _as(Tree, repo[_as(Commit, repo[tip.parents[0]]).tree])
        added = {entry.path for entry in tree.items()} - {entry.path for entry in parent_tree.items()}
        assert added == {info.path.split("/")[0].encode()}  # the TIL folder is all the commit adds


def test_a_checked_out_branch_is_refused_with_a_clear_message(app: SanApp, user_repo: Path) -> None:
    settings = GitHubSettings(target="local", local_repository=str(user_repo), local_branch="master")
    with Repo(str(user_repo)) as repo:
        head = repo.refs.get_symrefs()[HEADREF]
        settings = replace(settings, local_branch=head.decode().rsplit("/", 1)[1])
    app.save_settings(replace(app.settings, github=settings))
    day = finished_til(app)
    before = _status(user_repo)
    with unharmed(user_repo, settings.local_branch):
        app.commit_til(day)
        job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "is checked out" in (job.error_message or "")
    assert _status(user_repo) == before
