"""The preview of a commit (what the review window shows before Commit) makes the commit job's own decision:
the path it names is the one the job commits to, on GitHub and in a local repository alike; the default
message says "update" when this TIL's own earlier file is replaced; what the commit would be refused for
is said ahead."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import CommitStatus, CommitTarget, JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.placement import Spot
from san_desktop.core.settings import GitHubSettings
from tests.support.git_repo import git, user_repository
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.til import finished_til, run_one


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_github_server() as fake:
        yield fake


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return user_repository(tmp_path / "notes")


@pytest.fixture
def day(app: SanApp, github: FakeGitHub, notes: Path) -> str:
    settings = GitHubSettings(api_url=github.url, repository="me/til", local_repository=str(notes))
    app.save_settings(replace(app.settings, github=settings))
    app.connections.set_github_token(TOKEN)
    return finished_til(app)


def _commit_as_previewed(app: SanApp, day: str, target: CommitTarget) -> tuple[str, str]:
    """Commit where the preview says (as the window does); (the previewed path, the committed one)."""
    preview = app.commits.preview(day, target=target)
    app.commit_til(day, target=target, path=preview.plan.path, message=preview.plan.message)
    assert run_one(app, JobType.TIL_GITHUB_COMMIT).status is JobStatus.COMPLETED
    committed = app.commits.list(day)[-1]
    assert committed.status is CommitStatus.COMPLETED
    return preview.plan.path, committed.path


def test_a_path_taken_on_github_is_previewed_as_the_job_commits_it(app: SanApp, github: FakeGitHub, day: str) -> None:
    asked = app.commits.plan(day).path
    github.files[("main", asked)] = b"someone else's note"
    preview = app.commits.preview(day, target=CommitTarget.GITHUB)
    assert preview.asked == asked
    assert preview.placement is not None
    assert preview.placement.moved
    assert preview.plan.path == asked.removesuffix(".md") + "-1.md"
    assert _commit_as_previewed(app, day, CommitTarget.GITHUB) == (preview.plan.path, preview.plan.path)
    assert github.files[("main", asked)] == b"someone else's note"


def test_a_path_taken_locally_is_previewed_as_the_job_commits_it(app: SanApp, notes: Path, day: str) -> None:
    asked = app.commits.plan(day, target=CommitTarget.LOCAL).path
    (notes / asked).parent.mkdir(parents=True)
    (notes / asked).write_text("my own note\n", encoding="utf-8")
    git(notes, "add", asked)
    git(notes, "commit", "-q", "-m", "my note")  # on main: the til branch is made from it
    preview = app.commits.preview(day, target=CommitTarget.LOCAL)
    assert preview.placement is not None
    assert preview.plan.path == asked.removesuffix(".md") + "-1.md"
    assert preview.plan.where == f"local {notes.resolve()} (branch til)"
    assert _commit_as_previewed(app, day, CommitTarget.LOCAL) == (preview.plan.path, preview.plan.path)
    assert git(notes, "show", f"til:{asked}").stdout == "my own note\n"


@pytest.mark.parametrize("target", [CommitTarget.GITHUB, CommitTarget.LOCAL])
def test_a_new_version_replaces_its_own_file_and_says_update(app: SanApp, day: str, target: CommitTarget) -> None:
    first = app.commits.preview(day, target=target)
    assert first.placement is not None
    assert first.placement.spot is Spot.NEW
    assert first.plan.message.startswith("docs: add TIL - ")
    _commit_as_previewed(app, day, target)
    app.save_til_edit(day, (app.til.get(day).markdown or "") + "\nA second thought.\n")
    second = app.commits.preview(day, target=target)
    assert second.placement is not None
    assert second.placement.spot is Spot.REPLACE
    assert second.plan.path == first.plan.path
    assert second.plan.message.startswith("docs: update TIL - ")
    assert app.commits.plan(day, target=target).message.startswith("docs: update TIL - ")  # without looking, too
    assert _commit_as_previewed(app, day, target) == (first.plan.path, first.plan.path)


def test_the_same_text_is_refused_at_the_same_path_and_allowed_at_another(app: SanApp, day: str) -> None:
    path, _committed = _commit_as_previewed(app, day, CommitTarget.GITHUB)
    with pytest.raises(SanError, match=f"This text was already committed to GitHub me/til \\(branch main\\) at {path}"):
        app.commits.preview(day, target=CommitTarget.GITHUB)
    elsewhere = app.commits.preview(day, target=CommitTarget.GITHUB, path="notes/a-copy.md")
    assert elsewhere.plan.path == "notes/a-copy.md"


def test_a_branch_checked_out_is_refused_ahead(app: SanApp, notes: Path, day: str) -> None:
    app.save_settings(replace(app.settings, github=replace(app.settings.github, local_branch="main")))
    with pytest.raises(SanError, match=f"The branch main is checked out in {notes}"):
        app.commits.preview(day, target=CommitTarget.LOCAL)


def test_github_out_of_reach_leaves_the_path_to_the_commit(app: SanApp, day: str) -> None:
    app.save_settings(replace(app.settings, github=replace(app.settings.github, api_url="http://127.0.0.1:9")))
    preview = app.commits.preview(day, target=CommitTarget.GITHUB)
    assert preview.placement is None
    assert preview.plan.path == preview.asked
    assert preview.unchecked.startswith(
        "GitHub me/til (branch main) could not be looked at now (Cannot reach http://127.0.0.1:9 (read the file): "
        "could not connect (no server answers there, or the name is unknown))"
    )
    assert preview.unchecked.endswith("the path is checked when committing.")
