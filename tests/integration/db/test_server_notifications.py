"""A library on a PostgreSQL server tells its listeners of other processes' writes as they commit (revision
0022), and a reader of change notices misses none that commit out of id order."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from san_desktop.core.enums import JobType
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import CHANGES_CHANNEL, JOBS_CHANNEL, Database
from san_desktop.queue.job_queue import JobQueue
from tests.support.jobs import fast_settings

WAIT_SECONDS = 10  # a bound, not a pace: the notification comes within a fifth of a second


def test_a_job_written_on_one_machine_is_told_to_the_other(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    told = threading.Event()
    assert laptop.listen(JOBS_CHANNEL, told.set)
    assert laptop._notices is not None
    assert laptop._notices.listening.wait(WAIT_SECONDS)
    assert not told.is_set()  # nothing written yet

    JobQueue(desktop, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "scrap-1")

    assert told.wait(WAIT_SECONDS)
    assert laptop.notified


def test_a_change_notice_is_told_and_a_removed_listener_is_not_called(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    told, other = threading.Event(), threading.Event()
    laptop.listen(CHANGES_CHANNEL, told.set)
    laptop.listen(JOBS_CHANNEL, other.set)
    laptop.unlisten(JOBS_CHANNEL, other.set)
    assert laptop._notices is not None
    assert laptop._notices.listening.wait(WAIT_SECONDS)

    with desktop.write() as session:
        ChangeLog("desktop").record(session, "scrap", ["s1"])
        JobQueue(desktop, fast_settings()).enqueue(JobType.CARD_ANALYSIS, "s1", session=session)

    assert told.wait(WAIT_SECONDS)
    assert not other.is_set()


def test_a_sqlite_library_has_no_notifications(sqlite_db: Database) -> None:
    assert not sqlite_db.listen(JOBS_CHANNEL, lambda: None)
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
