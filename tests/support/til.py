"""A day with a finished TIL, made with the product's processors and the embedded provider."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from san_desktop.ai.base import KeptParts, TilCard, TilDraft
from san_desktop.ai.local import LocalProvider
from san_desktop.app import SanApp
from san_desktop.core.enums import JOB_POOLS, JobPool, JobType
from san_desktop.core.errors import TransientError
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import registry_for
from san_desktop.queue.records import JobRecord

TEXTS = (
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "Raft elects a leader; the leader replicates its log to followers.",
)


def executor(app: SanApp) -> JobExecutor:
    return JobExecutor(app.queue, registry_for(app), app.backend.require_session(), breakers={})


def cards_of(app: SanApp, texts: Sequence[str]) -> None:
    """Cards made from ``texts`` by the product's processors with the embedded provider."""
    for text in texts:
        app.capture_text(text)
    executor(app).drain(JobPool.AI)


def quizzes_of_today(app: SanApp, texts: Sequence[str]) -> str:
    """Cards from ``texts`` and today's quizzes (an OX and a short answer each); the day."""
    cards_of(app, texts)
    day = app.til.today()
    app.generate_quizzes(day)
    executor(app).drain(JobPool.AI)
    return day


def finished_til(app: SanApp, texts: Sequence[str] = TEXTS) -> str:
    for text in texts:
        app.capture_text(text)
    runner = executor(app)
    runner.drain(JobPool.AI)
    day = app.til.today()
    app.generate_til(day)
    runner.drain(JobPool.AI)
    return day


def run_one(app: SanApp, job_type: JobType) -> JobRecord:
    """Claim and run the next job of ``job_type`` (waiting retries made due first); its new state."""
    app.queue.wake({job_type})
    pool = JOB_POOLS[job_type]
    claim = app.queue.claim_next(app.backend.require_session(), pool, {job_type})
    assert claim is not None
    executor(app).run(claim)
    return app.queue.get(claim.job.id)


def til_text(app: SanApp, day: str) -> str:
    """The day's current TIL text (the day has one)."""
    markdown = app.til.get(day).markdown
    assert markdown is not None
    return markdown


class ScriptedProvider(LocalProvider):
    """The embedded provider, with a TIL writer and an embedder the test can break, hold or count."""

    def __init__(self) -> None:
        self.til_calls = 0
        self.til_embeds = 0
        self.fail_draft = False
        self.fail_embed = False
        self.hold_draft: threading.Event | None = None
        self.drafting = threading.Event()

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        self.til_calls += 1
        self.drafting.set()
        if self.hold_draft is not None:
            assert self.hold_draft.wait(20)
        if self.fail_draft:
            raise TransientError("the AI server went away while drafting")
        return super().write_til(day, cards, kept)

    def embed(self, texts: Sequence[str]) -> object:  # type: ignore[override]
        if texts and texts[0].startswith("# TIL"):
            self.til_embeds += 1
            if self.fail_embed:
                raise TransientError("the embedding server went away")
        return super().embed(texts)
