"""The app's handle on its library: a backend (``db.backends``: a SQLite file in the data folder, or a database on
a PostgreSQL server) and what every caller uses of it whichever it is: the session factory and the write
transactions. Opening a library is its backend's one call (``open_database``, ``open_server_database``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa

from san_desktop.core.errors import DatabaseUnreachableError
from san_desktop.db.backends.base import CHANGES_CHANNEL as CHANGES_CHANNEL
from san_desktop.db.backends.base import JOBS_CHANNEL as JOBS_CHANNEL
from san_desktop.db.backends.base import LibraryBackend, Written
from san_desktop.db.backends.base import Notified as Notified
from san_desktop.db.backends.base import SessionOrConnection as SessionOrConnection
from san_desktop.db.migrate import MigrationResult

T = TypeVar("T")

if TYPE_CHECKING:  # the ORM loads when a session is first used: a command line capture writes without it
    from sqlalchemy.orm import Session, sessionmaker

    from san_desktop.db.backends.sqlite.driver import SqliteDriver
    from san_desktop.db.backends.sqlite.integrity import IntegrityCheck

# key in a ``write_connection`` connection's ``info``: what runs once its transaction committed
_AFTER_COMMIT = "san_after_commit"


@dataclass
class Database:
    backend: LibraryBackend
    migration: MigrationResult
    data_dir: Path  # this machine's folder: settings, logs, the instance lock, generated files

    @property
    def engine(self) -> sa.Engine:
        return self.backend.engine

    @property
    def path(self) -> Path | None:
        """The library's file; None: a database on a server."""
        return self.backend.path

    @property
    def clock(self) -> Callable[[], datetime]:
        """The time jobs and notices are stamped with: this machine's; on a server, the server's."""
        return self.backend.clock

    @property
    def shares_library(self) -> bool:
        """Whether other machines may use the library at once (``LibraryBackend.shares_library``)."""
        return self.backend.shares_library

    def serialize(self, session: SessionOrConnection, key: str) -> None:
        """Make ``session``'s write transaction wait for any other that serialised on ``key`` until it ends: what
        it reads and then writes is as if alone."""
        self.backend.serialize(session, key)

    def listen(self, channel: str, callback: Notified) -> bool:
        """Call ``callback`` (from a thread of its own) whenever ``channel`` is notified: another process or
        machine changed what it announces (``JOBS_CHANNEL``: the ids of the jobs written, as they committed;
        ``CHANGES_CHANNEL``). False when nothing will call (a library whose readers look for changes instead)."""
        return self.backend.listen(channel, callback)

    def unlisten(self, channel: str, callback: Notified) -> None:
        self.backend.unlisten(channel, callback)

    @property
    def notified(self) -> bool:
        """Whether notifications come now (a server's library whose listening connection is up)."""
        return self.backend.notified

    def resync_clock(self) -> None:
        """Measure the server's time again (a server's library; the recovery sweep calls this)."""
        self.backend.resync_clock()

    @property
    def runs_on(self) -> str:
        """``SQLite 3.50.4 (sqlite3)``, ``PostgreSQL 18.3``."""
        return self.backend.runs_on

    @property
    def file(self) -> Path:
        """The SQLite file, for what only a file has (its backup, its integrity check, its size)."""
        if self.backend.path is None:
            raise RuntimeError(f"the library is on a server ({self.where}), not in a file")
        return self.backend.path

    @property
    def where(self) -> Path | str:
        """The database in messages: its file, or its server's name for it."""
        return self.backend.where

    @cached_property
    def sessions(self) -> sessionmaker[Session]:
        """The session factory, made on first use."""
        from sqlalchemy.orm import sessionmaker

        return sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One unit of work that writes: takes the write lock up front where the database has one (SQLite's
        BEGIN IMMEDIATE), so a read-then-write transaction never fails half-way on a lock, and commits once on success.
        A lock held elsewhere past the busy timeout raises ``DatabaseLockedError``, a full disk
        ``StorageFullError``."""
        from sqlalchemy.orm import Session

        with (
            self.backend.write_turn(),
            self.backend.explaining(),
            self.engine.connect().execution_options(**self.backend.write_options) as connection,
            Session(connection, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session
        self.backend.committed()

    @contextmanager
    def write_connection(self) -> Iterator[sa.Connection]:
        """``write`` on SQLAlchemy Core, for writes that need no ORM (capturing a scrap): the same
        ``BEGIN IMMEDIATE``, one commit, errors explained. What ``after_commit`` was given runs once the
        transaction committed, and not at all when it rolled back."""
        committed: list[Callable[[], None]] = []
        with (
            self.backend.write_turn(),
            self.backend.explaining(),
            self.engine.connect().execution_options(**self.backend.write_options) as connection,
        ):
            connection.info[_AFTER_COMMIT] = committed
            try:
                with connection.begin():
                    yield connection
            finally:
                del connection.info[_AFTER_COMMIT]  # the info stays with the pooled connection
        self.backend.committed()
        for callback in committed:
            callback()

    @staticmethod
    def after_commit(connection: sa.Connection, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the transaction of ``write_connection`` that ``connection`` is in committed."""
        pending = connection.info.get(_AFTER_COMMIT)
        if pending is None:
            raise RuntimeError("after_commit needs a connection from Database.write_connection")
        pending.append(callback)

    def write_cursor(self) -> Any:
        """A DB-API cursor in a transaction of its own, below SQLAlchemy's execution layer: for the job queue's
        hot path, which runs a handful of fixed statements per job and would spend most of its time in statement
        and result bookkeeping otherwise. Errors are explained as in ``write``."""
        return self.backend.write_cursor()

    def write_unit(self, work: Callable[[Any], T]) -> T:
        """``work(cursor)`` (a DB-API cursor) in a write transaction, and its result once that committed: the job
        queue's writes, which SQLite's backend commits together with others waiting (``LibraryBackend.write_unit``).
        ``work`` may run more than once (only its last run is committed): it changes nothing but the database."""
        return self.backend.write_unit(work)

    def write_unit_later(self, work: Callable[[Any], T], then: Written) -> None:
        """``write_unit`` without waiting: ``then(result, error)`` once written or failed, on another thread; such
        units are written in the order they were handed over (``LibraryBackend``)."""
        self.backend.write_unit_later(work, then)

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The server's absence that ``exc`` (or one of its causes) is, in words: a library on a server that does
        not answer (down, restarting, out of reach); None otherwise (a SQLite file is never away)."""
        return self.backend.unreachable(exc)

    def explained(self, exc: Exception) -> Exception:
        """``exc`` in words that say what to do, or ``exc`` itself when it is a bug."""
        return self.backend.explained(exc)

    def dispose(self) -> None:
        self.backend.dispose()


def open_database(
    path: Path, driver: SqliteDriver | None = None, *, checked: IntegrityCheck | None = None, migrated: bool = True
) -> Database:
    """The library in the SQLite file ``path``, migrated (backed up first) unless ``migrated`` is False (a command
    that only reads); raises ``DatabaseError`` subclasses (``db.backends.sqlite.backend.open_file_library``)."""
    from san_desktop.db.backends.sqlite.backend import open_file_library

    backend, result = open_file_library(path, driver, checked=checked, migrated=migrated)
    return Database(backend, result, path.parent)


def open_server_database(url: str, data_dir: Path, *, password: str | None = None, migrated: bool = True) -> Database:
    """The library on a PostgreSQL server (``db.backends.postgres.backend.open_server_library``)."""
    from san_desktop.db.backends.postgres.backend import open_server_library

    backend, result = open_server_library(url, password=password, migrated=migrated)
    return Database(backend, result, data_dir)
