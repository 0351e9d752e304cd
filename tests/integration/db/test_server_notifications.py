"""A library on a PostgreSQL server tells its listeners of other processes' writes as they commit (revisions
0022 and 0025: a job's notification names the job; 0028: only what another machine must act on, a job queued
or cancelled), never a process of its own writes, and a reader of change notices misses none that commit out
of id order."""

from __future__ import annotations

import sqlalchemy as sa

from san_desktop.core.enums import ErrorKind, JobPool, JobType
from san_desktop.core.errors import PermanentError
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import CHANGES_CHANNEL, JOBS_CHANNEL, Database
from san_desktop.queue.records import Classification
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings
from tests.support.postgres import notices_of
from tests.support.told import Told

WAIT_SECONDS = 10  # a bound, not a pace: the notification comes within a fifth of a second


def test_a_job_written_on_one_machine_is_told_to_the_other_by_its_id(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    told = Told()
    assert laptop.listen(JOBS_CHANNEL, told)
    assert notices_of(laptop).listening.wait(WAIT_SECONDS)
    assert told.payloads == [None]  # listening from now: what was written before is unknown
    told.called.clear()
    queue = JobStore(desktop, fast_settings())

    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")

    assert told.called.wait(WAIT_SECONDS)
    assert laptop.notified
    assert told.payloads == [None, frozenset({job.id})]


def test_a_lease_extended_is_not_news_and_a_rolled_back_write_is_never_told(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    queue = JobStore(desktop, fast_settings())
    queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = queue.claim_next(start_session(desktop, "headless"), JobPool.AI, frozenset({JobType.CARD_ANALYSIS}))
    assert claim is not None
    told = Told()
    laptop.listen(JOBS_CHANNEL, told)
    assert notices_of(laptop).listening.wait(WAIT_SECONDS)
    told.called.clear()  # (called once listening: what was written before is unknown)
    with desktop.engine.begin() as conn:
        conn.execute(sa.text("UPDATE async_jobs SET updated_at = updated_at + interval '1 second'"))
        conn.rollback()

    assert queue.extend_lease(claim) is not None
    news = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")  # after the two writes that are not news

    assert told.called.wait(WAIT_SECONDS)
    assert told.payloads == [None, frozenset({news.id})]


def _until_named(told: Told, job_id: str) -> None:
    while job_id not in told.named():
        assert told.called.wait(WAIT_SECONDS)
        told.called.clear()


def test_a_job_queued_cancelled_or_retried_is_told_and_one_claimed_completed_or_failed_is_not(
    machines: tuple[Database, Database],
) -> None:
    """Revision 0028: another machine hears of what it may run or must stop, not of every step of a job."""
    laptop, desktop = machines
    queue = JobStore(desktop, fast_settings(max_attempts=1))
    done, failed = (queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}") for n in (1, 2))
    told = Told()
    laptop.listen(JOBS_CHANNEL, told)
    assert notices_of(laptop).listening.wait(WAIT_SECONDS)
    worker = start_session(desktop, "headless")
    ai_jobs = frozenset({JobType.CARD_ANALYSIS})

    first = queue.claim_next(worker, JobPool.AI, ai_jobs)
    assert first is not None
    queue.complete(first)
    second = queue.claim_next(worker, JobPool.AI, ai_jobs)
    assert second is not None
    queue.fail(second, PermanentError("bad input"), Classification(ErrorKind.PERMANENT))
    queue.retry(failed.id)  # told
    cancelled = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-3")  # told
    queue.cancel(cancelled.id)  # told (the same id again)
    last = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-4")
    _until_named(told, last.id)  # notifications arrive in commit order: the others were told before it

    assert told.named() == {failed.id, cancelled.id, last.id}
    assert done.id not in told.named()


def test_what_a_process_wrote_is_never_told_back_to_it(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    told = Told()
    laptop.listen(JOBS_CHANNEL, told)
    assert notices_of(laptop).listening.wait(WAIT_SECONDS)

    own = JobStore(laptop, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    other = JobStore(desktop, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "scrap-2")
    _until_named(told, other.id)

    assert own.id not in told.named()  # (the laptop announced its own job itself)


def test_a_change_notice_is_told_and_a_removed_listener_is_not_called(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    told, other = Told(), Told()
    laptop.listen(CHANGES_CHANNEL, told)
    laptop.listen(JOBS_CHANNEL, other)
    laptop.unlisten(JOBS_CHANNEL, other)
    assert notices_of(laptop).listening.wait(WAIT_SECONDS)
    told.called.clear()  # (called once listening: what was written before is unknown)

    with desktop.write() as session:
        ChangeLog("desktop").record(session, "scrap", ["s1"])
        JobStore(desktop, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "s1", session=session)

    assert told.called.wait(WAIT_SECONDS)
    assert not other.called.is_set()


def test_a_sqlite_library_has_no_notifications(sqlite_db: Database) -> None:
    assert not sqlite_db.listen(JOBS_CHANNEL, Told())
    assert not sqlite_db.notified


def test_a_notice_that_commits_after_a_newer_one_is_read_once_all_the_same(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    reader, writer = ChangeLog("laptop"), ChangeLog("desktop")
    with laptop.sessions() as session:
        cursor = reader.newest_id(session)
    slow = desktop.engine.connect()
    slow_transaction = slow.begin()
    writer.record(slow, "scrap", ["late"])  # takes the smaller id, commits last
    with desktop.write() as session:
        writer.record(session, "scrap", ["early"])

    with laptop.sessions() as session:
        cursor, seen = reader.since(session, cursor)
    assert seen == [("scrap", "early")]

    slow_transaction.commit()
    slow.close()
    with laptop.sessions() as session:
        cursor, seen = reader.since(session, cursor)
        assert seen == [("scrap", "late")]
        assert reader.since(session, cursor) == (cursor, [])
    with laptop.sessions() as session:
        ids = session.execute(sa.text("SELECT item_id FROM change_notices ORDER BY id")).scalars().all()
    assert ids == ["late", "early"]
