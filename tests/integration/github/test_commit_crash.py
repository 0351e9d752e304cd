"""The headless runner killed right after GitHub accepted the write, before it heard so: after a restart
the commit is recorded COMPLETED and GitHub saw exactly one write."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from san_desktop.app import open_app
from san_desktop.core.enums import CommitStatus
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.processes import child_env, run_python

SAN = ["-m", "san_desktop.cli.main"]


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_github_server() as fake:
        yield fake


def _san(*args: str) -> subprocess.CompletedProcess[str]:
    return run_python([*SAN, *args], env=child_env(GH_TOKEN=TOKEN), timeout=120)  # no keyring in children


@pytest.mark.slow
def test_a_commit_killed_after_github_accepted_it_is_recorded_once(data_dir: Path, github: FakeGitHub) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {"github": {"api_url": github.url, "repository": "me/til"}, "jobs": {"poll_interval_seconds": 0.1}}
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    with open_app(data_dir, kind="cli", lock=False, log_to_stderr=False) as app:
        app.capture_text("SQLite WAL mode lets readers continue while a writer commits to the database.")
        day = app.til.today()
    assert _san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    assert _san("til", "generate", day).returncode == 0
    assert _san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    committed = _san("til", "commit", day)
    assert committed.returncode == 0, committed.stderr

    github.hold_put = True  # GitHub stores the file, then the runner dies before the answer arrives
    runner = subprocess.Popen(
        [sys.executable, *SAN, "jobs", "run"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(GH_TOKEN=TOKEN),
    )
    try:
        assert github.put_held.wait(60), "the runner never wrote to GitHub"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    github.release.set()

    done = _san("jobs", "run", "--until-idle", "--wait-retries", "--timeout", "120")
    assert done.returncode == 0, done.stderr
    shown = json.loads(_san("til", "commits", day, "--json").stdout)
    assert [item["status"] for item in shown] == [CommitStatus.COMPLETED.value]
    assert len(github.commits) == 1  # exactly one successful write
    assert shown[0]["commit_sha"] == github.commits[0]["sha"]
    assert len(github.writes()) == 1  # the retry found the content there and wrote nothing
