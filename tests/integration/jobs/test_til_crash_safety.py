"""The headless runner killed (SIGKILL) inside a TIL step, at the moment the AI server holds that step's
call: after a restart the workflow resumes at that step, the finished steps' AI calls are not repeated,
exactly one version is published, and no file of the killed run is left unreferenced."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp, open_app
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.workflow import TilStatus
from san_desktop.db.models import TilStepOutput
from san_desktop.services.til import TilService
from tests.support.jobs import jobs_of
from tests.support.openai_server import FakeOpenAI, fake_openai_server
from tests.support.processes import child_env, marker_appears, run_san

TEXTS = [
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "React hooks let function components keep state between renders.",
    "Raft elects a leader; the leader replicates its log to followers.",
]


def _til_chat(path: str, body: dict[str, Any]) -> bool:
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    return path.endswith("/chat/completions") and str(name).startswith("til_")


def _til_embedding(path: str, body: dict[str, Any]) -> bool:
    return path.endswith("/embeddings") and str((body.get("input") or [""])[0]).startswith("# TIL")


# the steps that call the AI server are held by the server; the others by a fail point
STEPS: dict[str, Callable[[str, dict[str, Any]], bool]] = {"draft": _til_chat, "embed": _til_embedding}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


def _app(data_dir: Path) -> Any:
    return open_app(data_dir, kind="cli", lock=False, log_to_stderr=False)


@pytest.mark.slow
@pytest.mark.parametrize("step", ["collect", "draft", "embed", "link"])
def test_a_til_killed_inside_a_step_resumes_there(
    data_dir: Path, server: FakeOpenAI, step: str, tmp_path: Path
) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {
        "ai": {"provider": "openai", "base_url": server.url, "chat_model": "m", "embedding_model": "e"},
        "jobs": {"poll_interval_seconds": 0.1, "backoff_base_seconds": 0.1},
    }
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    app: SanApp
    with _app(data_dir) as app:
        for text in TEXTS:
            app.capture_text(text)
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0  # the cards
    with _app(data_dir) as app:
        day = app.til.today()
        job_id = app.generate_til(day).value.id

    marker = tmp_path / f"til.{step}.reached"
    if step in STEPS:
        server.hold = STEPS[step]
        environment = child_env()
    else:
        environment = child_env(SAN_FAILPOINTS=f"til.{step}", SAN_FAILPOINT_DIR=str(tmp_path))
    runner = subprocess.Popen(
        [sys.executable, "-m", "san_desktop.cli.main", "jobs", "run"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    try:
        if step in STEPS:
            assert server.held.wait(60), f"the runner never reached the {step} step"
        else:
            assert marker_appears(marker, runner, 60), f"the runner never reached the {step} step"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    chat_before = sum(_til_chat(r.path, r.body) for r in server.requests)
    embeds_before = sum(_til_embedding(r.path, r.body) for r in server.requests)
    server.hold = None
    server.release.set()

    done = run_san("jobs", "run", "--until-idle", "--wait-retries", "--timeout", "120")
    assert done.returncode == 0, done.stderr

    with _app(data_dir) as app:
        assert app.queue.get(job_id).status is JobStatus.COMPLETED
        view = app.til.get(day)
        assert view.status is TilStatus.COMPLETED
        assert [version.version for version in view.versions] == [1]  # exactly one version
        assert view.markdown is not None
        assert view.markdown.startswith(f"# TIL {day}: What the day taught")
        with app.db.sessions() as session:
            outputs = list(
                session.scalars(sa.select(TilStepOutput.step).where(TilStepOutput.summary_id == view.summary_id))
            )
            referenced = TilService.referenced(session)
        files = {p.relative_to(app.artifacts.root).as_posix() for p in app.artifacts.root.rglob("*") if p.is_file()}
        jobs = jobs_of(app.queue, JobType.TIL_GENERATION)
    chat_after = sum(_til_chat(r.path, r.body) for r in server.requests)
    embeds_after = sum(_til_embedding(r.path, r.body) for r in server.requests)
    assert len(jobs) == 1
    order = ["collect", "draft", "embed", "link"]
    for finished in order[: order.index(step)]:
        assert outputs.count(finished) == 1, finished  # a step finished before the kill was not run again
    assert outputs.count(step) == 1  # the killed step ran again, once, to its end
    if order.index(step) > order.index("draft"):
        assert chat_after == chat_before  # the finished draft's AI calls were not repeated
    if step == "link":
        assert embeds_after == embeds_before == 1  # the finished embed step's call was not repeated
    elif step == "embed":
        assert embeds_after == embeds_before + 1  # the killed call, made again
    else:
        assert (embeds_before, embeds_after) == (0, 1)
    assert files <= referenced, files - referenced  # nothing of the killed run is left unreferenced


@pytest.mark.slow
def test_a_til_killed_too_often_says_failed_and_offers_retry(data_dir: Path, server: FakeOpenAI) -> None:
    """The job fails after ``max_interruptions`` (1 here) in the sweep of the next `san jobs run`: the TIL
    follows it to FAILED at the draft step, and `san til list/show` say so, with how to resume."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {
        "ai": {"provider": "openai", "base_url": server.url, "chat_model": "m", "embedding_model": "e"},
        "jobs": {"poll_interval_seconds": 0.1, "backoff_base_seconds": 0.1, "max_interruptions": 1},
    }
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    app: SanApp
    with _app(data_dir) as app:
        for text in TEXTS:
            app.capture_text(text)
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0  # the cards
    with _app(data_dir) as app:
        day = app.til.today()
        job_id = app.generate_til(day).value.id
    server.hold = _til_chat
    runner = subprocess.Popen(
        [sys.executable, "-m", "san_desktop.cli.main", "jobs", "run"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    try:
        assert server.held.wait(60), "the runner never reached the draft step"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    server.hold = None
    server.release.set()

    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0  # its sweep fails the job
    listed = run_san("til", "list")
    shown = run_san("til", "show", day)

    with _app(data_dir) as app:
        assert app.queue.get(job_id).status is JobStatus.FAILED
    assert [line.split() for line in listed.stdout.splitlines()[1:]] == [[day, "3", "FAILED"]], listed.stdout
    assert "Status: failed" in shown.stdout, shown.stdout
    assert "Failed at the draft step: Interrupted 1 times" in shown.stdout
    assert f"Resume it with: san til retry {day}" in shown.stdout
    assert run_san("til", "retry", day).returncode == 0
    assert run_san("jobs", "run", "--until-idle", "--timeout", "120").returncode == 0
    with _app(data_dir) as app:
        assert app.til.get(day).status is TilStatus.COMPLETED


@pytest.mark.slow
def test_a_draft_killed_midway_keeps_the_answers_it_had(data_dir: Path, server: FakeOpenAI) -> None:
    """The draft step makes one AI call per batch of a topic's cards, one to merge a topic's batches and one
    for the title. Killed at its third call, the next run asks only for what was not answered yet: every
    call is made once, but the one the kill cut off (issue 23, item 13)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with _app(data_dir) as app:  # cards of three topics, two of them about databases, made offline
        for text in [*TEXTS, "PostgreSQL MVCC keeps old row versions, so readers never block writers."]:
            app.capture_text(text)
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    settings = {
        "ai": {"provider": "openai", "base_url": server.url, "chat_model": "m", "embedding_model": "e",
               "til_cards_per_call": 1},
        "jobs": {"poll_interval_seconds": 0.1, "backoff_base_seconds": 0.1},
    }  # fmt: skip
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    with _app(data_dir) as app:
        day = app.til.today()
        app.generate_til(day)
    til_calls = iter(range(1, 1000))
    server.hold = lambda path, body: _til_chat(path, body) and next(til_calls) == 3
    runner = subprocess.Popen(
        [sys.executable, "-m", "san_desktop.cli.main", "jobs", "run"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(),
    )
    try:
        assert server.held.wait(60), "the runner never reached the third call of the draft"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    server.hold = None
    server.release.set()

    done = run_san("jobs", "run", "--until-idle", "--wait-retries", "--timeout", "120")
    assert done.returncode == 0, done.stderr

    asked = [str(r.body["messages"]) for r in server.requests if _til_chat(r.path, r.body)]
    calls = set(asked)
    assert any("---" in call for call in calls)  # a topic's batches were merged
    assert len(calls) >= 5  # four batches of three topics, a merge, a title
    assert len(asked) == len(calls) + 1  # each asked once, but the one the kill cut off: twice
    with _app(data_dir) as app:
        assert app.til.get(day).status is TilStatus.COMPLETED
        with app.db.sessions() as session:
            steps = list(session.scalars(sa.select(TilStepOutput.step)))
            referenced = TilService.referenced(session)
        files = {p.relative_to(app.artifacts.root).as_posix() for p in app.artifacts.root.rglob("*") if p.is_file()}
    assert "draft-part" not in steps  # done with once the draft was
    assert files <= referenced, files - referenced
