"""The token goes only where it should (issue 23, items 2, 6 and 7): no path or repository name can send a
request outside the repository's contents, a path template is a fixed set of fields, and nothing anyone
else put at the path is replaced. Against the GitHub-shaped server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.errors import PermanentError, SanError
from san_desktop.core.paths import database_path
from san_desktop.core.settings import GitHubSettings, load_settings
from san_desktop.db.models import TilCommit
from san_desktop.github.client import GitHubClient
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.processes import child_env, run_python, run_san
from tests.support.til import finished_til, run_one, til_text


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


def _outside_the_repository(github: FakeGitHub) -> list[str]:
    return [f"{r.method} {r.path}" for r in github.requests if not r.path.startswith(("/repos/me/til/", "/user"))]


@pytest.mark.parametrize("path", ["../../../../x.md", "a/../../b.md", "TIL/./x.md", "TIL//x.md", "/x.md"])
def test_a_path_that_would_leave_the_contents_is_refused_before_any_request(
    app: SanApp, github: FakeGitHub, day: str, path: str
) -> None:
    with pytest.raises(SanError, match="The file path"):
        app.commit_til(day, path=path)
    assert github.requests == []


@pytest.mark.parametrize("path", ["../../../../x.md", "a/../../b.md"])
def test_a_stored_request_with_such_a_path_sends_nothing_with_the_token(
    app: SanApp, github: FakeGitHub, day: str, path: str
) -> None:
    info = app.commit_til(day).value
    with app.backend.db.write() as session:  # as a request recorded before these rules would hold it
        session.execute(sa.update(TilCommit).where(TilCommit.id == info.id).values(path=path))
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.FAILED
    assert "'..' part" in (job.error_message or "")
    assert github.writes() == []
    assert _outside_the_repository(github) == []


def test_the_client_refuses_a_repository_that_is_not_owner_and_name(github: FakeGitHub) -> None:
    with GitHubClient(github.url, TOKEN) as client:
        for repository in ("owner/..", "me/til/../..", "../x"):
            with pytest.raises(PermanentError, match="is not owner/name"):
                client.read_file(repository, "TIL/x.md", "main")
            with pytest.raises(PermanentError, match="is not owner/name"):
                client.put_file(repository, "TIL/x.md", "main", b"x", "docs: add TIL", None)
    assert github.requests == []


def test_a_repository_that_is_not_owner_and_name_is_refused_where_it_is_set() -> None:
    result = run_san("config", "set", "github.repository", "owner/..")
    assert result.returncode != 0
    assert "is not owner/name" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("{slug:>50000000}.md", "write {slug}"),
        ("{slug.__class__.__mro__}", "write {slug}"),
        ("{foo}", "unknown field '{foo}'"),
        ("{0}", "unknown field '{0}'"),
        ("{", "never closed"),
    ],
)
def test_a_path_template_is_refused_at_config_set_with_a_sentence(template: str, said: str) -> None:
    result = run_san("config", "set", "github.path_template", template)
    assert result.returncode != 0
    assert said in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("template", ["{slug:>50000000}.md", "{slug.__class__.__mro__}", "{foo}", "{0}", "{"])
def test_a_template_edited_into_the_settings_file_is_not_used(
    app: SanApp, github: FakeGitHub, day: str, data_dir: Path, template: str
) -> None:
    """settings.json edited by hand: the template falls back to the default (said in the log), and
    ``san til commit`` works instead of a traceback."""
    raw = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    raw["github"]["path_template"] = template
    (data_dir / "settings.json").write_text(json.dumps(raw), encoding="utf-8")
    assert load_settings(data_dir).github.path_template == GitHubSettings().path_template
    size_before = database_path(data_dir).stat().st_size

    result = run_python(["-m", "san_desktop.cli.main", "til", "commit", day], env=child_env(GH_TOKEN=TOKEN))

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    app.reload_settings()
    (request,) = app.commits.list(day)
    assert request.path.startswith(f"TIL/{day[:4]}/{day[5:7]}/{day[8:]}/")
    assert len(request.path) < 120
    assert database_path(data_dir).stat().st_size < size_before + 1_000_000


def test_a_folder_at_the_path_on_github_is_never_replaced(app: SanApp, github: FakeGitHub, day: str) -> None:
    github.files[("main", "TIL/keep.md")] = b"# my own note\n"
    app.commit_til(day, path="TIL")
    job = run_one(app, JobType.TIL_GITHUB_COMMIT)
    assert job.status is JobStatus.COMPLETED, job.error_message
    (request,) = app.commits.list(day)
    assert request.path == "TIL-1"
    assert github.files[("main", "TIL/keep.md")] == b"# my own note\n"
    assert [r.path for r in github.writes()] == ["/repos/me/til/contents/TIL-1"]


def test_a_file_edited_on_github_since_san_wrote_it_is_kept(app: SanApp, github: FakeGitHub, day: str) -> None:
    app.commit_til(day)
    assert run_one(app, JobType.TIL_GITHUB_COMMIT).status is JobStatus.COMPLETED
    (first,) = app.commits.list(day)
    github.files[("main", first.path)] = b"a typo fixed in GitHub's editor\n"
    app.save_til_edit(day, til_text(app, day) + "\nA second version.\n")
    app.commit_til(day)
    assert run_one(app, JobType.TIL_GITHUB_COMMIT).status is JobStatus.COMPLETED
    second = app.commits.list(day)[-1]
    assert second.path == first.path.removesuffix(".md") + "-1.md"
    assert github.files[("main", first.path)] == b"a typo fixed in GitHub's editor\n"
