"""The library on a PostgreSQL server: its engine, its clock and notifications, its errors in words; opening it
is one call (``open_server_library``: connect, migrate, install pgvector)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import sqlalchemy as sa

from san_desktop.core.errors import DatabaseUnreachableError
from san_desktop.db.backends.base import Notified, SessionOrConnection, Written, close_quietly, owns
from san_desktop.db.backends.group_writer import GroupWriter
from san_desktop.db.backends.postgres.jobs import PostgresJobs
from san_desktop.db.backends.postgres.search import PostgresSearch
from san_desktop.db.backends.postgres.server import (
    CONNECT_TIMEOUT_SECONDS,
    ServerClock,
    ServerNotices,
    describe,
    explained,
    make_server_engine,
    migrate_server,
    read_schema,
)
from san_desktop.db.backends.postgres.vectors import PostgresVectors, install
from san_desktop.db.migrate import MigrationResult

T = TypeVar("T")

# connections kept for the job queue's writes between two of them (a worker of each pool, the sweep, the window)
IDLE_WRITERS = 6


class PostgresBackend:
    """A library in a database on a PostgreSQL server, named ``where`` (``describe``)."""

    write_options: dict[str, Any] = {}  # noqa: RUF012  (read only)
    shares_library = True
    path: Path | None = None
    # ids are handed out as rows are inserted, not as their transactions commit
    ids_in_commit_order = False
    search = PostgresSearch()
    vectors = PostgresVectors()

    def __init__(self, engine: sa.Engine, where: str, clock: ServerClock) -> None:
        self.engine = engine
        self.jobs = PostgresJobs(engine)
        self.server = where
        self.clock = clock
        # the server's process ids of this process's connections, so that their notifications are not told back
        self._own_pids: set[int] = set()
        # (at checkout: the pool may hold connections made before this backend, by the opening's checks)
        sa.event.listen(engine, "checkout", self._on_checkout)
        sa.event.listen(engine, "close", self._on_close)
        self.notices = ServerNotices(engine, self._own_pids)
        self._writers_lock = threading.Lock()
        self._idle_writers: list[Any] = []  # DB-API connections of ``write_cursor`` between two writes
        self._disposed = False
        self.driver_errors: tuple[type[Exception], ...] = (sa.exc.DBAPIError, psycopg.Error)
        # River's completer: the completions nobody waits for, written together
        self._completer = GroupWriter(
            _CompleterConnection(self), self.explained, self.driver_errors, name="san-completer"
        )
        owns(self, engine)

    def _on_checkout(self, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        self._own_pids.add(dbapi_connection.info.backend_pid)

    def _on_close(self, dbapi_connection: Any, _record: Any) -> None:
        self._forget(dbapi_connection)

    def _forget(self, dbapi_connection: Any) -> None:
        """A connection closing: its process id may serve another machine's connection next."""
        with suppress(psycopg.Error):
            self._own_pids.discard(dbapi_connection.info.backend_pid)

    def _close_writer(self, connection: Any) -> None:
        self._forget(connection)
        close_quietly(iter([connection]))

    @property
    def where(self) -> str:
        return self.server

    @property
    def runs_on(self) -> str:
        version = self.engine.dialect.server_version_info or ()
        return "PostgreSQL " + ".".join(str(part) for part in version)

    @contextmanager
    def write_turn(self) -> Iterator[None]:
        """No turn: the server orders writers itself (row locks, ``SKIP LOCKED`` claims, advisory locks for what
        is serialised), so the writers of this process write at once, each on a connection of its own, as other
        machines' writers do."""
        yield

    def serialize(self, session: SessionOrConnection, key: str) -> None:
        """A transaction-level advisory lock on the key (the seeds serialise a day's TIL request with ``SELECT …
        FOR UPDATE``; a lock on the key also covers the request that creates the row)."""
        session.execute(sa.text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})

    def defer_foreign_keys(self, conn: sa.Connection) -> bool:
        return False  # (the schema's foreign keys are not declared deferrable)

    def upsert(self, session: SessionOrConnection, table: sa.Table, rows: Sequence[Mapping[str, Any]]) -> None:
        from sqlalchemy.dialects.postgresql import insert

        if not rows:
            return
        statement = insert(table)
        keys = {column.name for column in table.primary_key}
        changed = {name: statement.excluded[name] for name in rows[0] if name not in keys}
        session.execute(statement.on_conflict_do_update(index_elements=sorted(keys), set_=changed), list(rows))

    def _take_writer(self) -> Any:
        """A connection for ``write_cursor``: one given back by an earlier write, or a new one. One that was lost
        (the server restarted, the network dropped) is dropped; the write that found it lost failed with the
        server's condition. Not the engine's pool: it looks at each connection before use (a round trip per
        job's finish)."""
        with self._writers_lock:
            while self._idle_writers:
                connection = self._idle_writers.pop()
                if not (connection.closed or connection.broken):
                    return connection
                self._close_writer(connection)
        pooled = self.engine.raw_connection()
        pooled.detach()
        return pooled.dbapi_connection

    def _give_back_writer(self, connection: Any) -> None:
        if not (connection.closed or connection.broken):
            with self._writers_lock:
                if not self._disposed and len(self._idle_writers) < IDLE_WRITERS:
                    self._idle_writers.append(connection)
                    return
        self._close_writer(connection)

    @contextmanager
    def write_cursor(self) -> Iterator[Any]:
        """A cursor in a transaction of its own (psycopg begins one by itself), committed when the block ends."""
        with self.explaining():
            connection = self._take_writer()
            try:
                cursor = connection.cursor()
                try:
                    yield cursor
                    connection.commit()
                except BaseException:
                    if not (connection.closed or connection.broken):
                        connection.rollback()
                    raise
                finally:
                    cursor.close()
            finally:
                self._give_back_writer(connection)

    def write_unit(self, work: Callable[[Any], T]) -> T:
        """``work(cursor)`` in a transaction of its own (the server orders concurrent writers itself)."""
        with self.write_cursor() as cursor:
            return work(cursor)

    def committed(self) -> None:
        pass  # (the server checkpoints by itself)

    def write_unit_later(self, work: Callable[[Any], T], then: Written) -> None:
        """Handed to the completer (River's): the units waiting are written in one transaction."""
        self._completer.run_later(work, then)

    @contextmanager
    def explaining(self) -> Iterator[None]:
        try:
            yield
        except self.driver_errors as exc:
            said = self.explained(exc)
            if said is exc:
                raise
            raise said from exc

    def explained(self, exc: Exception) -> Exception:
        return explained(exc, self.server)

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The server's absence that ``exc`` (or one of its causes) is, met explained or as the driver raised it."""
        seen: set[int] = set()
        item: BaseException | None = exc
        while item is not None and id(item) not in seen:
            seen.add(id(item))
            if isinstance(item, DatabaseUnreachableError):
                return item
            if isinstance(item, self.driver_errors):
                said = self.explained(item)
                if isinstance(said, DatabaseUnreachableError):
                    return said
            item = item.__cause__ or item.__context__
        return None

    def listen(self, channel: str, callback: Notified) -> bool:
        self.notices.listen(channel, callback)
        return True

    def unlisten(self, channel: str, callback: Notified) -> None:
        self.notices.unlisten(channel, callback)

    @property
    def notified(self) -> bool:
        return self.notices.listening.is_set()

    def resync_clock(self) -> None:
        """Measure the server's time again (the recovery sweep calls this, off the GUI thread)."""
        self.clock.measure()

    def dispose(self) -> None:
        self._completer.close()
        self.notices.stop()
        with self._writers_lock:
            self._disposed = True
            idle, self._idle_writers = self._idle_writers, []
        close_quietly(iter(idle))
        self.engine.dispose()


class _CompleterConnection:
    """The completer's connection: one of the backend's own, in autocommit mode (the completer says ``BEGIN``)."""

    begin = "BEGIN"

    def __init__(self, backend: PostgresBackend) -> None:
        self.backend = backend

    def connect(self) -> Any:
        pooled = self.backend.engine.raw_connection()
        pooled.detach()
        connection: Any = pooled.dbapi_connection
        connection.autocommit = True
        return connection

    def usable(self, connection: Any) -> bool:
        return not (connection.closed or connection.broken)

    def in_transaction(self, connection: Any) -> bool:
        return bool(connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    def close(self, connection: Any) -> None:
        self.backend._close_writer(connection)


def open_server_library(
    url: str, *, password: str | None = None, migrated: bool = True
) -> tuple[PostgresBackend, MigrationResult]:
    """Open (and migrate) the library on a PostgreSQL server; raises ``DatabaseError`` subclasses: the server
    unreachable, refusing the login, a newer or a foreign database. Without ``migrated`` (a command that only
    reads), nothing is written: an empty database stays empty (``NoLibraryYetError``), an older one as it is."""
    engine = make_server_engine(url, password=password)
    where = describe(url)
    try:
        if migrated:
            result = migrate_server(engine)
            install(engine)  # similar cards by its HNSW index where the server has pgvector
        else:
            result = read_schema(engine)
        clock = ServerClock(engine)
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        raise explained(exc, where) from exc
    except BaseException:
        engine.dispose()
        raise
    return PostgresBackend(engine, where, clock), result


__all__ = ["CONNECT_TIMEOUT_SECONDS", "PostgresBackend", "open_server_library"]
