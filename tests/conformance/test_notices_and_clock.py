"""Change notices, notifications and the clock on each backend: notices another process wrote are read back in
order and one's own never; a backend either notifies (another process's commit, never a rolled-back one's) or
says it does not, and then readers look instead; the clock is the library's, aware, in UTC, not going back between two
measures of a server's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from san_desktop.db.backends.base import CHANGES_CHANNEL
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database, open_server_database
from tests.support.told import Told

WAIT_SECONDS = 10  # a bound, not a pace


def test_notices_of_other_processes_are_read_in_order_and_ones_own_never(library: Database) -> None:
    mine, theirs = ChangeLog("window", clock=library.backend.clock), ChangeLog("cli", clock=library.backend.clock)
    with library.sessions() as session:
        start = mine.newest_id(session)
    with library.write() as session:
        theirs.record(session, "card", ["a", "b"])
        mine.record(session, "card", ["mine"])
    with library.write() as session:
        theirs.record(session, "scrap", ["c"])
    with library.sessions() as session:
        newest, read = mine.since(session, start)
        assert read == [("card", "a"), ("card", "b"), ("scrap", "c")]
        assert mine.since(session, newest)[1] == []


def test_a_backend_notifies_of_another_process_commit_and_never_of_a_rollback_or_says_it_does_not(
    library: Database, tmp_path: Path
) -> None:
    told = Told()
    listening = library.backend.listen(CHANGES_CHANNEL, told)
    try:
        assert listening == library.shares_library  # a server tells its machines; a file's readers look
        if not listening:
            assert not library.backend.notified
            return
        assert told.called.wait(WAIT_SECONDS)  # from now: what came before is unknown
        assert told.payloads == [None]
        told.called.clear()
        (tmp_path / "other").mkdir()
        other = open_server_database(library.engine.url.render_as_string(hide_password=False), tmp_path / "other")
        try:
            log = ChangeLog("cli", clock=other.backend.clock)
            with pytest.raises(RuntimeError), other.write() as session:
                log.record(session, "card", ["rolled-back"])
                raise RuntimeError("the write fails after its notice")
            with other.write() as session:
                log.record(session, "card", ["committed"])
        finally:
            other.dispose()
        assert told.called.wait(WAIT_SECONDS)
        assert library.backend.notified
        assert told.payloads[1:] == [frozenset({""})]  # one notification: the other process's committed write
    finally:
        library.backend.unlisten(CHANGES_CHANNEL, told)


def test_the_clock_is_aware_utc_near_the_machines_and_does_not_go_back_between_measures(library: Database) -> None:
    before = datetime.now(UTC)
    times = [library.backend.clock() for _ in range(50)]
    assert times == sorted(times)
    library.backend.resync_clock()  # (a new measure may move a server's clock by its round trip, either way)
    times.append(library.backend.clock())
    assert all(time.utcoffset() == timedelta(0) for time in times)
    assert all(abs(time - before) < timedelta(seconds=5) for time in times)  # the test server runs on this machine
