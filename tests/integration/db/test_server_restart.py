"""A library on a server that restarts (or a network that drops) fails the write that found the connection
gone, with the server's condition in words, and the next write connects again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.core.enums import JobPool, JobType
from san_desktop.core.errors import DatabaseServerError
from san_desktop.db.database import Database, open_server_database
from san_desktop.queue.store import JobStore
from san_desktop.services.app_sessions import start_session
from tests.support.jobs import fast_settings
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary

TYPES = frozenset({JobType.CARD_ANALYSIS})


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own: it is restarted."""
    server = start_temporary()
    yield server
    stop_temporary(server)


def test_the_write_after_a_restart_fails_in_words_and_the_next_one_connects_again(
    own_server: PostgresServer, tmp_path: Path
) -> None:
    db = open_server_database(own_server.create_database(template=own_server.migrated_template()), tmp_path)
    try:
        queue = JobStore(db, fast_settings())
        session_id = start_session(db, "headless")
        queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
        assert queue.claim_next(session_id, JobPool.AI, TYPES) is not None  # the queue's writer connection is up

        own_server.stop("fast")
        own_server.start()  # the same port: the library's URL is as good as before

        queue.enqueue(JobType.CARD_ANALYSIS, "scrap-2")  # the pool checks its connections before use
        with pytest.raises(DatabaseServerError, match="cannot be reached"):
            queue.claim_next(session_id, JobPool.AI, TYPES)  # found the writer's connection gone
        claim = queue.claim_next(session_id, JobPool.AI, TYPES)
        assert claim is not None
        assert claim.job.target_id == "scrap-2"
    finally:
        db.dispose()


@pytest.mark.postgresql
def test_a_read_whose_connection_the_server_ends_after_it_answered_leaves_no_error_behind(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """The server ends a connection (it stops, or an administrator ends the session) between a read's answer and
    the read's end: the read gave its rows, the connection leaves the pool without an error logged (the pool's
    reset of it failed, with a traceback on a runner's stderr), and the next read connects again."""
    with caplog.at_level(logging.WARNING), db.backend.jobs.reading() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
        with db.backend.engine.connect() as other:
            ended = other.scalar(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": pid})
        assert ended  # (it waited for the session to end)
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []
    with db.backend.jobs.reading() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
