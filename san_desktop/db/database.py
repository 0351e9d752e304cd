"""The app's handle on its database: engine, driver and session factory; a SQLite file in the data folder, or a
database on a PostgreSQL server (``open_server_database``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import sqlalchemy as sa

from san_desktop.core.errors import (
    DatabaseDamagedError,
    DatabaseLockedError,
    DatabaseUnreachableError,
    LibraryNotUpgradedError,
    NoLibraryYetError,
    StorageFullError,
    is_storage_full,
)
from san_desktop.core.sqlite_codes import is_damaged, is_locked
from san_desktop.core.timeutil import utcnow
from san_desktop.db.engine import BUSY_TIMEOUT_MS, SqliteDriver, choose_driver, make_engine
from san_desktop.db.integrity import IntegrityCheck
from san_desktop.db.migrate import MigrationResult, inspect_database, latest_backup, migrate

if TYPE_CHECKING:  # the ORM loads when a session is first used: a command line capture writes without it
    from sqlalchemy.orm import Session, sessionmaker

# a transaction to write in: an ORM session (``Database.write``) or a Core connection (``write_connection``)
SessionOrConnection: TypeAlias = "Session | sa.Connection"

# channels of a server library's notifications (revisions 0022, 0025): a job row changed (its id); a change
# notice was written
JOBS_CHANNEL = "san_jobs"
CHANGES_CHANNEL = "san_changes"
# What a listener is called with: the payloads of the notifications that arrived together, or None when what
# was written is unknown (its channel was just listened to, the first time or after a lost connection).
Notified: TypeAlias = "Callable[[frozenset[str] | None], None]"

# key in a ``write_connection`` connection's ``info``: what runs once its transaction committed
_AFTER_COMMIT = "san_after_commit"


@dataclass
class Database:
    path: Path | None  # the SQLite file; None: a database on a server (``server``)
    driver: SqliteDriver | None  # the SQLite module; None on a server
    engine: sa.Engine
    migration: MigrationResult
    data_dir: Path  # this machine's folder: settings, logs, the instance lock, generated files
    server: str | None = None  # a server's database as people name it (``db.postgres.describe``), no password
    # the time jobs and notices are stamped with: this machine's; on a server, the server's (``ServerClock``)
    clock: Callable[[], datetime] = utcnow
    # Writers of this process take turns here rather than in SQLite's busy handler, which sleeps longer and
    # longer between tries (up to a tenth of a second): two card workers slept past each other's commits that
    # way, and a GUI write behind a worker's would too. Re-entrant, so a thread that nests writes fails
    # in SQLite (locked, after the busy timeout) as before; a turn not given within the busy timeout is
    # "locked" too, never a hang. Other processes (the command line) still meet SQLite's busy handler.
    _write_turn: threading.RLock = field(default_factory=threading.RLock, repr=False)
    # The connection of ``write_cursor`` and ``write_statement``, made on first use and kept: their
    # transactions take turns, so one connection serves them all; checking one out of SQLAlchemy's pool
    # and back (with the pool's reset) for every job cost the job queue more than its statements did.
    _writer: Any = field(default=None, repr=False)
    _notices: Any = field(default=None, repr=False)  # a server's ``ServerNotices`` (its thread: the first ``listen``)

    @property
    def is_sqlite(self) -> bool:
        return self.path is not None

    def serialize(self, session: SessionOrConnection, key: str) -> None:
        """Make ``session``'s write transaction wait for any other that serialised on ``key`` until it ends: what
        it reads and then writes is as if alone. SQLite: every write transaction is (``BEGIN IMMEDIATE``).
        On a server, a transaction-level advisory lock on the key (the seeds serialise a day's TIL request
        with ``SELECT … FOR UPDATE``; a lock on the key also covers the request that creates the row)."""
        if self.path is None:
            session.execute(sa.text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"), {"key": key})

    def listen(self, channel: str, callback: Notified) -> bool:
        """Call ``callback`` (from a thread of its own) whenever ``channel`` is notified: another process or
        machine changed what it announces (``JOBS_CHANNEL``: the ids of the jobs written, as they committed;
        ``CHANGES_CHANNEL``). False when nothing will call: a SQLite library has no notifications (its readers
        look for changes instead)."""
        if self._notices is None:
            return False
        self._notices.listen(channel, callback)
        return True

    def unlisten(self, channel: str, callback: Notified) -> None:
        if self._notices is not None:
            self._notices.unlisten(channel, callback)

    @property
    def notified(self) -> bool:
        """Whether notifications come now (a server's library whose listening connection is up)."""
        return self._notices is not None and self._notices.listening.is_set()

    def resync_clock(self) -> None:
        """Measure the server's time again (a server's library; the recovery sweep calls this)."""
        measure = getattr(self.clock, "measure", None)
        if measure is not None:
            measure()

    @property
    def runs_on(self) -> str:
        """``SQLite 3.50.4 (sqlite3)``, ``PostgreSQL 18.3``."""
        if self.driver is not None:
            return f"SQLite {self.driver.sqlite_version} ({self.driver.name})"
        version = self.engine.dialect.server_version_info or ()
        return "PostgreSQL " + ".".join(str(part) for part in version)

    @property
    def file(self) -> Path:
        """The SQLite file, for what only a file has (its backup, its integrity check, its size)."""
        if self.path is None:
            raise RuntimeError(f"the library is on a server ({self.server}), not in a file")
        return self.path

    @property
    def where(self) -> Path | str:
        """The database in messages: its file, or its server's name for it."""
        return self.path if self.path is not None else str(self.server)

    @contextmanager
    def _turn(self) -> Iterator[None]:
        if not self._write_turn.acquire(timeout=BUSY_TIMEOUT_MS / 1000):
            raise DatabaseLockedError(self.where, by_this_app=True)
        try:
            yield
        finally:
            self._write_turn.release()

    @cached_property
    def sessions(self) -> sessionmaker[Session]:
        """The session factory, made on first use."""
        from sqlalchemy.orm import sessionmaker

        return sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One unit of work that writes: takes SQLite's write lock up front (BEGIN IMMEDIATE), so a
        read-then-write transaction never fails half-way on a lock, and commits once on success.
        A lock held elsewhere past the busy timeout raises ``DatabaseLockedError``, a full disk
        ``StorageFullError``."""
        from sqlalchemy.orm import Session

        with (
            self._turn(),
            self._explain_locks(),
            self.engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection,
            Session(connection, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def write_connection(self) -> Iterator[sa.Connection]:
        """``write`` on SQLAlchemy Core, for writes that need no ORM (capturing a scrap): the same
        ``BEGIN IMMEDIATE``, one commit, errors explained. What ``after_commit`` was given runs once the
        transaction committed, and not at all when it rolled back."""
        committed: list[Callable[[], None]] = []
        with (
            self._turn(),
            self._explain_locks(),
            self.engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection,
        ):
            connection.info[_AFTER_COMMIT] = committed
            try:
                with connection.begin():
                    yield connection
            finally:
                del connection.info[_AFTER_COMMIT]  # the info stays with the pooled connection
        for callback in committed:
            callback()

    @staticmethod
    def after_commit(connection: sa.Connection, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the transaction of ``write_connection`` that ``connection`` is in committed."""
        pending = connection.info.get(_AFTER_COMMIT)
        if pending is None:
            raise RuntimeError("after_commit needs a connection from Database.write_connection")
        pending.append(callback)

    @contextmanager
    def write_cursor(self) -> Iterator[Any]:
        """A DB-API cursor inside ``BEGIN IMMEDIATE`` ... ``COMMIT``, below SQLAlchemy's execution layer:
        for the job queue's hot path, which runs a handful of fixed statements per job and would spend
        most of its time in statement and result bookkeeping otherwise. Errors are explained as in
        ``write``. (Without the schema check of the engine's ``BEGIN``: job rows cascade into no table
        with a full-text trigger, which is what SQLite stumbles on after a schema change elsewhere.) On a
        server, the cursor takes the same placeholders (``db.postgres.PortableCursor``)."""
        with self._turn(), self._explain_locks():
            connection = self._writer_connection()
            cursor = self._cursor(connection)
            try:
                if self.path is None:  # a server's driver begins a transaction by itself
                    try:
                        yield cursor
                        connection.commit()
                    except BaseException:
                        connection.rollback()
                        raise
                    return
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    yield cursor
                    cursor.execute("COMMIT")
                except BaseException:
                    if connection.in_transaction:
                        cursor.execute("ROLLBACK")
                    raise
            finally:
                cursor.close()

    @contextmanager
    def write_statement(self) -> Iterator[Any]:
        """A DB-API cursor for one writing statement, which SQLite commits as the statement completes (read
        its rows to the end): a transaction without the round trips of ``BEGIN`` and ``COMMIT``, for the
        job queue's commonest write. Takes the write turn and explains errors as ``write_cursor`` does."""
        # the turn and the explanation inline, not as two more context managers: this runs for every job
        if not self._write_turn.acquire(timeout=BUSY_TIMEOUT_MS / 1000):
            raise DatabaseLockedError(self.where, by_this_app=True)
        try:
            connection = self._writer_connection()
            cursor = self._cursor(connection)
            try:
                yield cursor
                if self.path is None:  # a server's driver began a transaction: end it
                    connection.commit()
            except BaseException:
                if self.path is None:
                    connection.rollback()
                raise
            finally:
                cursor.close()
        except self._driver_errors as exc:
            explained = self._explained(exc)
            if explained is exc:
                raise
            raise explained from exc
        finally:
            self._write_turn.release()

    def _cursor(self, connection: Any) -> Any:
        """A DB-API cursor that takes SQLite's placeholders (``queue.claims``' SQL), on either database."""
        if self.path is not None:
            return connection.cursor()
        from san_desktop.db.postgres import PortableCursor

        return PortableCursor(connection.cursor())

    def _writer_connection(self) -> Any:
        """The connection of ``write_cursor`` and ``write_statement`` (the caller has the write turn). A server's
        that was lost (the server restarted, the network dropped) is made again for the next write; the write
        that found it lost failed with the server's condition."""
        if self._writer is not None and self.path is None and getattr(self._writer.dbapi_connection, "broken", False):
            stale, self._writer = self._writer, None
            _close_detached(stale)
        if self._writer is None:
            writer = self.engine.raw_connection()  # set up as the engine's connections are
            writer.detach()  # the pool's no more: closed by ``dispose``
            self._writer = writer
        return self._writer.dbapi_connection

    @contextmanager
    def _explain_locks(self) -> Iterator[None]:
        """SQLite's conditions that are not bugs become errors that say what to do: locked by another
        program, disk full or read-only, damaged."""
        try:
            yield
        except self._driver_errors as exc:
            explained = self._explained(exc)
            if explained is exc:
                raise
            raise explained from exc

    @cached_property
    def _driver_errors(self) -> tuple[type[Exception], ...]:
        if self.driver is not None:
            return (sa.exc.DBAPIError, self.driver.module.Error)
        import psycopg

        return (sa.exc.DBAPIError, psycopg.Error)

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The server's absence that ``exc`` (or one of its causes) is, in words: a library on a server that does
        not answer (down, restarting, out of reach), met explained or as the driver raised it; None otherwise
        (a SQLite file is never away)."""
        if self.path is not None:
            return None
        seen: set[int] = set()
        item: BaseException | None = exc
        while item is not None and id(item) not in seen:
            seen.add(id(item))
            if isinstance(item, DatabaseUnreachableError):
                return item
            if isinstance(item, self._driver_errors):
                explained = self._explained(item)
                if isinstance(explained, DatabaseUnreachableError):
                    return explained
            item = item.__cause__ or item.__context__
        return None

    def _explained(self, exc: Exception) -> Exception:
        """``exc`` in words that say what to do, or ``exc`` itself when it is a bug."""
        if self.path is None:
            from san_desktop.db.postgres import explained

            return explained(exc, str(self.server))
        if is_locked(exc):
            return DatabaseLockedError(self.path)
        if is_storage_full(exc, self.path):
            return StorageFullError(self.path.parent)
        if is_damaged(exc):
            cause = str(getattr(exc, "orig", None) or exc)
            return DatabaseDamagedError(self.path, cause, latest_backup(self.path))
        return exc

    def dispose(self) -> None:
        if self._notices is not None:
            self._notices.stop()
        with self._turn():
            writer, self._writer = self._writer, None
        if writer is not None:
            _close_detached(writer)
        self.engine.dispose()


def _close_detached(writer: Any) -> None:
    """Close the writer's connection, which belongs to no pool: at once, without a pool's reset (a rollback on a
    connection the server dropped fails, and the pool logs that with a traceback)."""
    connection = writer.dbapi_connection
    if connection is None:
        return
    try:
        connection.close()
    except Exception:  # (lost already: nothing left to close)
        logging.getLogger(__name__).debug("Closing the writer's connection failed", exc_info=True)


def open_database(
    path: Path, driver: SqliteDriver | None = None, *, checked: IntegrityCheck | None = None, migrated: bool = True
) -> Database:
    """Migrate (backing up first) and open the database; raises ``DatabaseError`` subclasses.
    ``checked``: its integrity check, started earlier on a thread (``migrate`` waits for it). Without
    ``migrated`` (a command that only reads), the file is opened as it is: none is made and none upgraded
    (``NoLibraryYetError``, ``LibraryNotUpgradedError``)."""
    chosen = driver or (checked.driver if checked is not None else choose_driver())
    result = migrate(path, chosen, checked=checked) if migrated else _as_it_is(path, chosen, checked)
    engine = make_engine(path, chosen)
    return Database(path=path, driver=chosen, engine=engine, migration=result, data_dir=path.parent)


def _as_it_is(path: Path, driver: SqliteDriver, checked: IntegrityCheck | None) -> MigrationResult:
    """Where the file stands, for a command that only reads: at this version's schema, or it raises."""
    state = inspect_database(path, driver, checked=checked)
    if state.revision is None:
        raise NoLibraryYetError(path)
    if not state.up_to_date:
        raise LibraryNotUpgradedError(path, state.revision, state.head)
    return MigrationResult(state.revision, state.head, None)


def open_server_database(url: str, data_dir: Path, *, password: str | None = None, migrated: bool = True) -> Database:
    """Open (and migrate) the library on a PostgreSQL server; raises ``DatabaseError`` subclasses: the server
    unreachable, refusing the login, a newer or a foreign database. Without ``migrated`` (a command that only
    reads), nothing is written: an empty database stays empty (``NoLibraryYetError``), an older one as it is."""
    from san_desktop.db import server_vectors
    from san_desktop.db.postgres import (
        ServerClock,
        ServerNotices,
        describe,
        explained,
        make_server_engine,
        migrate_server,
        read_schema,
    )

    engine = make_server_engine(url, password=password)
    where = describe(url)
    try:
        if migrated:
            result = migrate_server(engine)
            server_vectors.install(engine)  # similar cards by its HNSW index where the server has pgvector
        else:
            result = read_schema(engine)
        clock = ServerClock(engine)
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        raise explained(exc, where) from exc
    except BaseException:
        engine.dispose()
        raise
    database = Database(
        path=None, driver=None, engine=engine, migration=result, data_dir=data_dir, server=where, clock=clock
    )
    database._notices = ServerNotices(engine)
    return database
