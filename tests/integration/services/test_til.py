"""The daily TIL through the real processor: steps, resume at the failed step without repeating finished
ones, one summary per day, the input revision, run-scoped files."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.workflow import TIL_STEPS, TilStatus
from san_desktop.db.models import DailySummary, Scrap
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.services.app_sessions import start_session
from san_desktop.services.recovery.sweep import sweep
from san_desktop.services.til import NoCardsError
from tests.support.jobs import jobs_of
from tests.support.processes import child_env, run_san
from tests.support.til import ScriptedProvider

TEXTS = [
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "React hooks let function components keep state.\n\n```js\nconst [n, setN] = useState(0);\n```",
    "Raft elects a leader; the leader replicates its log to followers.",
]


@pytest.fixture
def provider(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> ScriptedProvider:
    scripted = ScriptedProvider()
    monkeypatch.setattr(app.providers, "_provider", scripted)
    return scripted


def _executor(app: SanApp, registry: ProcessorRegistry | None = None) -> JobExecutor:
    registry = registry or build_registry(app.services, app.providers)
    return JobExecutor(app.queue, registry, app.backend.require_session(), breakers={})


def _cards_of_today(app: SanApp, texts: Sequence[str] = TEXTS) -> str:
    for text in texts:
        app.capture_text(text)
    _executor(app).drain(JobPool.AI)
    return app.til.today()


def _run_til(app: SanApp, executor: JobExecutor) -> None:
    claim = app.queue.claim_next(app.backend.require_session(), JobPool.AI, {JobType.TIL_GENERATION})
    assert claim is not None
    executor.run(claim)


def test_a_day_becomes_a_til_with_topics_and_code(app: SanApp, provider: ScriptedProvider) -> None:
    day = _cards_of_today(app)
    job = app.generate_til(day).value
    _run_til(app, _executor(app))
    assert app.queue.get(job.id).status is JobStatus.COMPLETED
    view = app.til.get(day)
    assert view.status is TilStatus.COMPLETED
    assert view.current_version == 1
    assert view.markdown is not None
    assert view.markdown.startswith(f"# TIL {day}")
    assert "## Databases" in view.markdown
    assert "```js\nconst [n, setN] = useState(0);\n```" in view.markdown
    assert not view.inputs_changed
    assert [version.version for version in view.versions] == [1]


def test_a_failed_step_is_resumed_without_repeating_finished_ones(app: SanApp, provider: ScriptedProvider) -> None:
    day = _cards_of_today(app)
    app.generate_til(day)
    provider.fail_embed = True
    _run_til(app, _executor(app))
    view = app.til.get(day)
    assert view.status is TilStatus.FAILED
    assert view.last_failed_step == "embed"
    assert view.last_error_message == "the embedding server went away"  # the sentence, no class name
    assert (provider.til_calls, provider.til_embeds) == (1, 1)

    provider.fail_embed = False
    app.queue.wake({JobType.TIL_GENERATION})  # the automatic retry, without waiting for its backoff
    _run_til(app, _executor(app))
    view = app.til.get(day)
    assert view.status is TilStatus.COMPLETED
    assert view.last_failed_step is None
    assert (provider.til_calls, provider.til_embeds) == (1, 2)  # the draft was not written again


def test_generating_again_while_one_runs_returns_the_running_job(app: SanApp, provider: ScriptedProvider) -> None:
    day = _cards_of_today(app)
    first = app.generate_til(day).value
    second = app.generate_til(day).value
    assert second.id == first.id
    assert len(jobs_of(app.queue, JobType.TIL_GENERATION)) == 1


def test_a_day_without_cards_is_refused(app: SanApp) -> None:
    with pytest.raises(NoCardsError, match="no cards from 2020-01-01"):
        app.generate_til("2020-01-01")


def test_a_card_added_while_drafting_leaves_the_version_without_a_revision(
    app: SanApp, provider: ScriptedProvider
) -> None:
    day = _cards_of_today(app)
    app.generate_til(day)
    provider.hold_draft = threading.Event()
    worker = threading.Thread(target=_run_til, args=(app, _executor(app)))
    worker.start()
    assert provider.drafting.wait(20)
    app.capture_text("Partial indexes keep an index small by covering only the rows a query needs.")
    registry = build_registry(app.services, app.providers)
    _executor(app, registry).drain(JobPool.AI)  # its card is made (the TIL job is claimed already)
    provider.hold_draft.set()
    worker.join(30)
    view = app.til.get(day)
    assert view.status is TilStatus.COMPLETED
    assert view.versions[-1].input_revision is None
    assert view.inputs_changed
    shown = run_san("til", "show", day, "--json")  # and the command line says so too
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["inputs_changed"] is True


def test_a_failed_run_deletes_its_own_files_and_never_another_runs(app: SanApp) -> None:
    another = app.artifacts.run("another-run")
    planted = another.write_text("til", "summary-1", 1, "md", "published by another run")
    another.publish_pending()
    written: list[str] = []

    def writes_then_fails(context: JobContext) -> None:
        key = context.files.write_text("til", "summary-1", 1, "md", "this run's draft")
        written.append(key)
        assert context.files.store.exists(key)
        raise ValueError("the step after the file failed")

    registry = ProcessorRegistry()
    registry.register(JobType.TIL_GENERATION, writes_then_fails)
    app.queue.enqueue(JobType.TIL_GENERATION, "summary-1")
    _run_til(app, _executor(app, registry))
    assert written[0].startswith("til/summary-1_v1_")
    assert written[0] != planted
    assert not app.artifacts.exists(written[0])  # its own file: gone
    assert app.artifacts.read_text(planted) == "published by another run"  # another run's: untouched


def test_two_concurrent_generate_commands_make_one_summary_and_one_job(app: SanApp) -> None:
    day = _cards_of_today(app)
    command = [sys.executable, "-m", "san_desktop.cli.main", "til", "generate", day]
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        for _ in range(2)
    ]
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        outputs.append(out)
    job_ids = {line.split("job ")[1].split()[0] for line in outputs}
    assert len(job_ids) == 1  # the second caller got the first's job
    assert len(jobs_of(app.queue, JobType.TIL_GENERATION)) == 1
    assert [day_info.local_date for day_info in app.til.days() if day_info.status is not None] == [day]
    shown = json.loads(
        subprocess.run(
            [sys.executable, "-m", "san_desktop.cli.main", "til", "show", day, "--json"],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=60,
            check=True,
        ).stdout
    )
    assert shown["active_job_id"] in job_ids


def test_days_are_local_days_with_their_live_cards_newest_first(app: SanApp) -> None:
    app.save_settings(replace(app.settings, til=replace(app.settings.til, timezone="Asia/Seoul")))  # UTC+9
    captured = {  # UTC capture time -> what it is in Seoul
        "2026-11-28 14:59:00": "23:59 on the 28th",
        "2026-11-28 15:01:00": "00:01 on the 29th",
        "2026-11-29 10:00:00": "19:00 on the 29th",
        "2026-11-25 03:00:00": "12:00 on the 25th",
        "2026-11-27 01:00:00": "the 27th, deleted below",
    }
    scrap_ids = {}
    for moment, text in captured.items():
        scrap_ids[moment] = app.capture_text(f"A card captured at {text} about SQLite pages.").value.scrap_id
    _executor(app).drain(JobPool.AI)
    with app.db.write() as session:
        for moment, scrap_id in scrap_ids.items():
            session.execute(
                sa.update(Scrap)
                .where(Scrap.id == scrap_id)
                .values(created_at=datetime.fromisoformat(moment).replace(tzinfo=UTC))
            )
    app.scraps.delete(scrap_ids["2026-11-27 01:00:00"])
    days = [(info.local_date, info.cards) for info in app.til.days()]
    assert days == [("2026-11-29", 2), ("2026-11-28", 1), ("2026-11-25", 1)]
    assert [(info.local_date, info.cards) for info in app.til.days(limit=2)] == days[:2]


def test_the_recall_cards_of_a_til_are_other_days_cards(app: SanApp, provider: ScriptedProvider) -> None:
    older = app.capture_text("SQLite checkpoints copy WAL pages back into the database file.").value.scrap_id
    with app.db.write() as session:  # captured two days ago
        scrap = session.get(Scrap, older)
        assert scrap is not None
        scrap.created_at = scrap.created_at - timedelta(days=2)
    day = _cards_of_today(app)
    app.generate_til(day)
    _run_til(app, _executor(app))
    view = app.til.get(day)
    assert view.recall
    own = set(TEXTS)
    assert all(item.title not in own for item in view.recall)
    assert view.recall[0].title.startswith("SQLite checkpoints")


@pytest.mark.parametrize("step", ["collect", "draft", "embed", "link"])
def test_a_run_that_died_inside_a_step_is_taken_up_at_that_step(
    app: SanApp, provider: ScriptedProvider, step: str
) -> None:
    """What a killed process leaves: the summary in the step's in-progress state, the outputs of the
    steps before it, the job PROCESSING for a dead session. The next run resumes at that step."""
    day = _cards_of_today(app)
    app.generate_til(day)
    _run_til(app, _executor(app))  # the steps' outputs exist from this run
    calls = (provider.til_calls, provider.til_embeds)
    index = [s.name for s in TIL_STEPS].index(step)
    with app.db.write() as session:
        summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == day))
        assert summary is not None
        summary.status = TIL_STEPS[index].running  # as the dead process left it (no transition check)
        summary_id = summary.id
    dead = start_session(app.db, "headless")
    app.queue.enqueue(JobType.TIL_GENERATION, summary_id)
    assert app.queue.claim_next(dead, JobPool.AI, {JobType.TIL_GENERATION}) is not None
    sweep(app.queue, app.backend.require_session(), app.settings.jobs)  # the start-up sweep re-queues it

    _run_til(app, _executor(app))
    view = app.til.get(day)
    assert view.status is TilStatus.COMPLETED
    assert [version.version for version in view.versions] == [1, 2]
    expected_draft_calls = calls[0] + (1 if index <= 1 else 0)  # the draft again only when it died there or before
    expected_embeds = calls[1] + (1 if index <= 2 else 0)
    assert (provider.til_calls, provider.til_embeds) == (expected_draft_calls, expected_embeds)


def test_a_til_job_is_labelled_by_its_day(app: SanApp, provider: ScriptedProvider) -> None:
    day = _cards_of_today(app)
    job = app.generate_til(day).value
    scrap_job = next(j for j in jobs_of(app.queue) if j.job_type is JobType.CARD_ANALYSIS)
    labels = app.job_labels([job, scrap_job])
    assert labels[job.target_id] == f"TIL of {day}"
    assert scrap_job.target_id in labels  # a scrap's card title (or text) beside it
