"""What a library's database must do, written once per database (as River's ``riverdriver`` and huey's
``BaseStorage`` are): ``db.backends.sqlite`` for a file in the data folder, ``db.backends.postgres`` for a
database on a server. Above this seam nothing asks which database it is on: ``db.database.Database`` holds a
backend and hands every question that has a database's answer to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.orm import Session

    from san_desktop.core.errors import DatabaseUnreachableError

# a transaction to write in: an ORM session (``Database.write``) or a Core connection (``write_connection``)
SessionOrConnection: TypeAlias = "Session | sa.Connection"
# What a listener is called with: the payloads of the notifications that arrived together, or None when what
# was written is unknown (its channel was just listened to, the first time or after a lost connection).
Notified: TypeAlias = "Callable[[frozenset[str] | None], None]"

# channels of a server library's notifications (revisions 0022, 0025): a job row changed (its id); a change
# notice was written
JOBS_CHANNEL = "san_jobs"
CHANGES_CHANNEL = "san_changes"


class LibraryBackend(Protocol):
    """One database's way of doing what the library needs of it."""

    @property
    def engine(self) -> sa.Engine: ...
    @property
    def path(self) -> Path | None:
        """The library's file, when it is one."""
        ...

    @property
    def clock(self) -> Callable[[], datetime]:
        """The time jobs and notices are stamped with (a server's: its own)."""
        ...

    @property
    def where(self) -> Path | str:
        """The database in messages: its file, or its server's name for it (never a password)."""
        ...

    @property
    def runs_on(self) -> str:
        """``SQLite 3.50.4 (sqlite3)``, ``PostgreSQL 18.3``."""
        ...

    @property
    def shares_library(self) -> bool:
        """Whether other machines may use the library at once (a server's): settings they share live in the
        database, generated files too, and a change another machine made is announced, not looked for."""
        ...

    # --- transactions ----------------------------------------------------------------------------
    @property
    def write_options(self) -> dict[str, Any]:
        """Execution options of a connection that writes (SQLite's ``BEGIN IMMEDIATE``)."""
        ...

    def write_turn(self) -> AbstractContextManager[None]:
        """The turn a writer of this process takes before it writes (SQLite: one at a time)."""
        ...

    def write_cursor(self) -> AbstractContextManager[Any]:
        """A DB-API cursor in a transaction of its own, committed when the block ends (the job queue's)."""
        ...

    def write_statement(self) -> AbstractContextManager[Any]:
        """A DB-API cursor for one writing statement, committed as it completes."""
        ...

    def serialize(self, session: SessionOrConnection, key: str) -> None:
        """Make the transaction wait for any other that serialised on ``key`` until it ends."""
        ...

    # --- errors ----------------------------------------------------------------------------------
    @property
    def driver_errors(self) -> tuple[type[Exception], ...]: ...

    def explaining(self) -> AbstractContextManager[None]:
        """A block whose database errors that are not bugs are raised explained (``explained``)."""
        ...

    def explained(self, exc: Exception) -> Exception:
        """``exc`` in words that say what to do, or ``exc`` itself when it is a bug."""
        ...

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The server's absence that ``exc`` (or a cause) is; None otherwise (a file is never away)."""
        ...

    # --- notices and clock -----------------------------------------------------------------------
    def listen(self, channel: str, callback: Notified) -> bool: ...
    def unlisten(self, channel: str, callback: Notified) -> None: ...
    @property
    def notified(self) -> bool: ...
    def resync_clock(self) -> None: ...

    def dispose(self) -> None: ...


def close_quietly(connections: Iterator[Any]) -> None:
    """Close DB-API connections that belong to no pool, at once (one the server dropped fails to close)."""
    import logging

    for connection in connections:
        if connection is None:
            continue
        try:
            connection.close()
        except Exception:  # (lost already: nothing left to close)
            logging.getLogger(__name__).debug("Closing a connection failed", exc_info=True)
