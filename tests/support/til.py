"""A day with a finished TIL, made with the product's processors and the embedded provider."""

from __future__ import annotations

from collections.abc import Sequence

from san_desktop.app import SanApp
from san_desktop.core.enums import JOB_POOLS, JobPool, JobType
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import registry_for
from san_desktop.queue.records import JobRecord

TEXTS = (
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "Raft elects a leader; the leader replicates its log to followers.",
)


def executor(app: SanApp) -> JobExecutor:
    return JobExecutor(app.queue, registry_for(app), app.backend.require_session(), breakers={})


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
