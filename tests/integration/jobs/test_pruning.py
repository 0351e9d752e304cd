"""Finished jobs are pruned by the sweep (issue 26): completed ones after ``keep_completed_days``, failed and
cancelled ones after ``keep_failed_days``, with their attempts; and pruning changes no behaviour: a scrap
whose analysis the person cancelled stays without one after that job's row is gone."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.core.settings import JobSettings
from san_desktop.db.models import AsyncJob, JobAttempt
from san_desktop.queue.store import JobStore
from san_desktop.services.recovery.hooks import prune_hook
from san_desktop.services.recovery.sweep import SweepHook, sweep
from san_desktop.services.scraps import orphan_hook
from tests.support.clock import FakeClock
from tests.support.til import executor


def _jobs(app: SanApp) -> dict[str, tuple[str, JobType, JobStatus]]:
    with app.db.sessions() as session:
        rows = session.execute(sa.select(AsyncJob.id, AsyncJob.target_id, AsyncJob.job_type, AsyncJob.status))
        return {row.id: (row.target_id, row.job_type, row.status) for row in rows}


def test_the_sweep_prunes_exactly_the_old_finished_jobs_and_a_cancelled_scrap_stays_cancelled(app: SanApp) -> None:
    done = app.capture_text("SQLite WAL mode lets readers continue while a writer appends.").value.scrap_id
    recent = app.capture_text("Raft elects a leader by majority vote among the servers.").value.scrap_id
    executor(app).drain(JobPool.AI)
    cancelled = app.capture_text("Docker builds an image layer by layer with a build cache.").value.scrap_id
    for job_id, (target, _type, status) in _jobs(app).items():
        if target == cancelled and status is JobStatus.PENDING:
            app.queue.cancel(job_id)  # the person cancelled its analysis and its refinement
    start = max(row.updated_at for row in app.queue.changed_since(app.queue.clock() - timedelta(days=1)))
    with app.db.write() as session:  # the second scrap's jobs finished two days later than the first's
        session.execute(
            sa.update(AsyncJob).where(AsyncJob.target_id == recent).values(finished_at=start + timedelta(days=2))
        )
    clock = FakeClock(start + timedelta(days=8))  # past the 7 days of the completed first scrap's jobs
    queue = JobStore(app.db, JobSettings(keep_completed_days=7, keep_failed_days=30), clock=clock)
    session_id = app.backend.require_session()
    hooks: list[SweepHook] = [orphan_hook, prune_hook]

    sweep(queue, session_id, queue.settings, hooks=hooks)
    left = _jobs(app)
    assert {target for target, _type, _status in left.values()} == {recent, cancelled}
    assert all(status is JobStatus.CANCELLED for target, _t, status in left.values() if target == cancelled)
    with app.db.sessions() as session:  # the attempts of the pruned jobs went with them
        assert set(session.scalars(sa.select(JobAttempt.job_id))) <= set(left)

    clock.advance(timedelta(days=30).total_seconds())  # every finished job is old now
    sweep(queue, session_id, queue.settings, hooks=hooks)
    sweep(queue, session_id, queue.settings, hooks=hooks)  # (a sweep after the cancelled rows are gone)
    assert _jobs(app) == {}  # nothing pruned came back, and the cancelled work was not asked for again
    assert app.scraps.get(cancelled).card_id is None
    assert app.scraps.get(done).card_id is not None


def test_a_failure_the_sweep_will_still_retry_is_not_pruned(app: SanApp) -> None:
    job = app.queue.enqueue(JobType.CARD_ANALYSIS, "t")
    with app.db.write() as session:
        session.execute(
            sa.update(AsyncJob)
            .where(AsyncJob.id == job.id)
            .values(status=JobStatus.FAILED, error_kind="TRANSIENT", attempts=1, finished_at=app.queue.clock())
        )
    clock = FakeClock(app.queue.clock() + timedelta(days=365))
    queue = JobStore(app.db, JobSettings(keep_failed_days=30), clock=clock)
    with app.db.write() as session:
        assert queue.prune(session, 100) == 0
        session.execute(sa.update(AsyncJob).where(AsyncJob.id == job.id).values(attempts=3))  # none left
    with app.db.write() as session:
        assert queue.prune(session, 100) == 1


def test_no_failure_is_pruned_while_the_failure_groups_are_on_screen(app: SanApp) -> None:
    failed = app.queue.enqueue(JobType.CARD_ANALYSIS, "failed")
    done = app.queue.enqueue(JobType.CARD_ANALYSIS, "done")
    with app.db.write() as session:
        for job_id, status in ((failed.id, JobStatus.FAILED), (done.id, JobStatus.COMPLETED)):
            session.execute(
                sa.update(AsyncJob)
                .where(AsyncJob.id == job_id)
                .values(status=status, error_kind="PERMANENT", finished_at=app.queue.clock())
            )
    queue = JobStore(app.db, JobSettings(), clock=FakeClock(app.queue.clock() + timedelta(days=365)))

    queue.failures_on_screen(True)
    with app.db.write() as session:
        assert queue.prune(session, 100) == 1
    assert set(_jobs(app)) == {failed.id}  # the completed one went; the failure the person looks at stays

    queue.failures_on_screen(False)
    with app.db.write() as session:
        assert queue.prune(session, 100) == 1
    assert _jobs(app) == {}
