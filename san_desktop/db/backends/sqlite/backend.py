"""The library in a SQLite file: its engine, its writers' turns, its errors in words; opening it is one call
(``open_file_library``: check, back up, migrate, connect)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

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
from san_desktop.db.backends.base import Notified, SessionOrConnection, Written, close_quietly, owns
from san_desktop.db.backends.group_writer import GroupWriter
from san_desktop.db.backends.sqlite.engine import BUSY_TIMEOUT_MS, SqliteDriver, choose_driver, make_engine
from san_desktop.db.backends.sqlite.integrity import IntegrityCheck
from san_desktop.db.backends.sqlite.jobs import SqliteJobs
from san_desktop.db.backends.sqlite.migrate import inspect_database, latest_backup, migrate
from san_desktop.db.backends.sqlite.search import SqliteSearch
from san_desktop.db.backends.sqlite.vectors import SqliteVectors
from san_desktop.db.migrate import MigrationResult

T = TypeVar("T")


class SqliteBackend:
    """A library in the SQLite file ``path``."""

    write_options: dict[str, Any] = {"sqlite_begin": "IMMEDIATE"}  # noqa: RUF012  (read only)
    shares_library = False
    notified = False
    ids_in_commit_order = True  # one writer at a time
    search = SqliteSearch()
    vectors = SqliteVectors()

    def __init__(self, path: Path, driver: SqliteDriver, engine: sa.Engine) -> None:
        self.path: Path | None = path
        self.file = path
        self.driver = driver
        self.engine = engine
        self.jobs = SqliteJobs(engine)
        self.clock: Callable[[], datetime] = utcnow
        # Writers of this process take turns here rather than in SQLite's busy handler, which sleeps longer and
        # longer between tries (up to a tenth of a second): two card workers slept past each other's commits that
        # way, and a GUI write behind a worker's would too. Re-entrant, so a thread that nests writes fails
        # in SQLite (locked, after the busy timeout) as before; a turn not given within the busy timeout is
        # "locked" too, never a hang. Other processes (the command line) still meet SQLite's busy handler.
        self._turn = threading.RLock()
        # Writers waiting for the turn (other than the writer thread): the writer thread lets them go first
        # between two batches, so that a person's write never waits behind a drain.
        self._gate = threading.Condition(threading.Lock())
        self._waiting = 0
        # The connection of ``write_cursor`` and of the writer thread, made on first use and kept: their
        # transactions take turns, so one connection serves them all; checking one out of SQLAlchemy's pool
        # and back (with the pool's reset) for every job cost the job queue more than its statements did.
        self._writer: Any = None
        self._group = GroupWriter(
            _KeptConnection(self),
            self.explained,
            self.driver_errors,
            take_turn=self._writer_takes_turn,
            give_turn=self._turn.release,
            locked=lambda: DatabaseLockedError(self.file, by_this_app=True),
            checkpoint="PRAGMA wal_checkpoint(PASSIVE)",
        )
        owns(self, engine)

    @property
    def where(self) -> Path:
        return self.file

    @property
    def runs_on(self) -> str:
        return f"SQLite {self.driver.sqlite_version} ({self.driver.name})"

    @contextmanager
    def write_turn(self) -> Iterator[None]:
        with self._gate:
            self._waiting += 1
            self._gate.notify_all()  # (a waiter is news for whoever waits for one)
        try:
            taken = self._turn.acquire(timeout=BUSY_TIMEOUT_MS / 1000)
        finally:
            with self._gate:
                self._waiting -= 1
                if not self._waiting:
                    self._gate.notify_all()
        if not taken:
            raise DatabaseLockedError(self.file, by_this_app=True)
        try:
            yield
        finally:
            self._turn.release()

    def _writer_takes_turn(self) -> bool:
        """The writer thread's turn, once no other writer waits for it (or the busy timeout passed)."""
        with self._gate:
            self._gate.wait_for(lambda: not self._waiting, timeout=BUSY_TIMEOUT_MS / 1000)
        return self._turn.acquire(timeout=BUSY_TIMEOUT_MS / 1000)

    def write_unit(self, work: Callable[[Any], T]) -> T:
        """``work(cursor)`` in a write transaction of the writer thread, committed with the other units waiting
        (``GroupWriter``); its result once committed."""
        return self._group.run(work)

    def committed(self) -> None:
        """A write of the app committed outside the writer thread: the writer checkpoints when one is due."""
        self._group.committed_elsewhere()

    def write_unit_later(self, work: Callable[[Any], T], then: Written) -> None:
        """``write_unit`` without waiting: ``then(result, error)`` on the writer thread once it was written."""
        self._group.run_later(work, then)

    def serialize(self, session: SessionOrConnection, key: str) -> None:
        """Every SQLite write transaction is serialised already (``BEGIN IMMEDIATE``)."""

    def defer_foreign_keys(self, conn: sa.Connection) -> bool:
        """``PRAGMA defer_foreign_keys``: until the transaction ends."""
        conn.exec_driver_sql("PRAGMA defer_foreign_keys = ON")
        return True

    def upsert(self, session: SessionOrConnection, table: sa.Table, rows: Sequence[Mapping[str, Any]]) -> None:
        from sqlalchemy.dialects.sqlite import insert

        if not rows:
            return
        statement = insert(table)
        keys = {column.name for column in table.primary_key}
        changed = {name: statement.excluded[name] for name in rows[0] if name not in keys}
        session.execute(statement.on_conflict_do_update(index_elements=sorted(keys), set_=changed), list(rows))

    def _writer_connection(self) -> Any:
        if self._writer is None:
            writer = self.engine.raw_connection()  # set up as the engine's connections are
            writer.detach()  # the pool's no more: closed by ``dispose``
            self._writer = writer
        return self._writer.dbapi_connection

    @contextmanager
    def write_cursor(self) -> Iterator[Any]:
        """A DB-API cursor inside ``BEGIN IMMEDIATE`` ... ``COMMIT``, below SQLAlchemy's execution layer (without
        the schema check of the engine's ``BEGIN``: job rows cascade into no table with a full-text trigger,
        which is what SQLite stumbles on after a schema change elsewhere)."""
        with self.write_turn(), self.explaining():
            connection = self._writer_connection()
            cursor = connection.cursor()
            try:
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
    def explaining(self) -> Iterator[None]:
        """SQLite's conditions that are not bugs become errors that say what to do."""
        try:
            yield
        except self.driver_errors as exc:
            explained = self.explained(exc)
            if explained is exc:
                raise
            raise explained from exc

    @cached_property
    def driver_errors(self) -> tuple[type[Exception], ...]:
        return (sa.exc.DBAPIError, self.driver.module.Error)

    def explained(self, exc: Exception) -> Exception:
        """Locked by another program, disk full or read-only, damaged; else ``exc`` itself."""
        if is_locked(exc):
            return DatabaseLockedError(self.file)
        if is_storage_full(exc, self.file):
            return StorageFullError(self.file.parent)
        if is_damaged(exc):
            cause = str(getattr(exc, "orig", None) or exc)
            return DatabaseDamagedError(self.file, cause, latest_backup(self.file))
        return exc

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        return None  # a file is never away

    def listen(self, channel: str, callback: Notified) -> bool:
        return False  # no notifications: readers look for changes instead

    def unlisten(self, channel: str, callback: Notified) -> None:
        pass

    def resync_clock(self) -> None:
        pass

    def dispose(self) -> None:
        self._group.close()  # (its connection is ``_writer``'s)
        with self.write_turn():
            writer, self._writer = self._writer, None
        if writer is not None:
            close_quietly(iter([writer.dbapi_connection]))
        self.engine.dispose()


class _KeptConnection:
    """The writer thread's connection: the backend's kept one (``write_cursor``'s too), closed by the backend."""

    begin = "BEGIN IMMEDIATE"

    def __init__(self, backend: SqliteBackend) -> None:
        self.backend = backend

    def connect(self) -> Any:
        return self.backend._writer_connection()

    def usable(self, connection: Any) -> bool:
        return True  # a file is never away

    def in_transaction(self, connection: Any) -> bool:
        return bool(connection.in_transaction)

    def close(self, connection: Any) -> None:
        pass


def open_file_library(
    path: Path, driver: SqliteDriver | None = None, *, checked: IntegrityCheck | None = None, migrated: bool = True
) -> tuple[SqliteBackend, MigrationResult]:
    """Migrate (backing up first) and open the library file; raises ``DatabaseError`` subclasses.
    ``checked``: its integrity check, started earlier on a thread (``migrate`` waits for it). Without
    ``migrated`` (a command that only reads), the file is opened as it is: none is made and none upgraded
    (``NoLibraryYetError``, ``LibraryNotUpgradedError``)."""
    chosen = driver or (checked.driver if checked is not None else choose_driver())
    result = migrate(path, chosen, checked=checked) if migrated else _as_it_is(path, chosen, checked)
    return SqliteBackend(path, chosen, make_engine(path, chosen)), result


def _as_it_is(path: Path, driver: SqliteDriver, checked: IntegrityCheck | None) -> MigrationResult:
    """Where the file stands, for a command that only reads: at this version's schema, or it raises."""
    state = inspect_database(path, driver, checked=checked)
    if state.revision is None:
        raise NoLibraryYetError(path)
    if not state.up_to_date:
        raise LibraryNotUpgradedError(path, state.revision, state.head)
    return MigrationResult(state.revision, state.head, None)
