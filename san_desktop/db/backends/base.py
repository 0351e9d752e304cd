"""What a library's database must do, written once per database (as River's ``riverdriver`` and huey's
``BaseStorage`` are): ``db.backends.sqlite`` for a file in the data folder, ``db.backends.postgres`` for a
database on a server. Above this seam nothing asks which database it is on: ``db.database.Database`` holds a
backend and hands every question that has a database's answer to it."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import sqlalchemy as sa

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
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

# a search ranks at most this many of its newest matches (each list of ``LibrarySearch``)
SEARCH_CANDIDATES = 1000


def like_pattern(word: str) -> str:
    """``word`` anywhere, as a ``LIKE … ESCAPE '\\'`` pattern."""
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# Alembic's ``include_name`` filter: whether autogenerate and the drift guard look at a table or an index
IncludeName: TypeAlias = "Callable[[str | None, str, Mapping[str, str | None]], bool]"


class LibrarySearch(Protocol):
    """A database's full-text search over its own word indexes: ids best first. Each list is of live cards
    (their scrap not deleted), one of ``scrap_ids``' when given, else among the newest ``SEARCH_CANDIDATES``
    matches."""

    def card_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """Cards with every word of ``search`` in their title, summary, tags or category (the title counting
        most), a short word as a part of a longer one."""
        ...

    def text_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """Cards whose scrap's text has every word of ``search`` as the start of one of its words."""
        ...

    def til_word_matches(self, conn: sa.Connection, search: str, *, limit: int) -> list[str]:
        """Days whose current TIL text has every word of ``search`` as a word's start (its title counting most)."""
        ...

    def live_in_space(self, conn: sa.Connection, card_ids: Sequence[str], model_id: str) -> set[str]:
        """Those of ``card_ids`` still live and still in ``model_id``'s space (an index of vectors may predate a
        deletion or a re-embedding)."""
        ...


class LibraryVectors(Protocol):
    """A database's own index of card vectors, derived from ``card_embeddings`` (dropped and made again at will,
    never managed by Alembic). Where it answers no nearest-card question, the in-memory index of ``db.vectors``
    does."""

    @property
    def added_order(self) -> str:
        """The column of ``card_embeddings`` that grows with every row added, by any process or machine."""
        ...

    def index_card(
        self, conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32], *, new: bool
    ) -> None:
        """Put a card's vector in its space's index, replacing an earlier one (none when ``new``)."""
        ...

    def unindex_card(self, conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None: ...

    def nearest(
        self,
        conn: sa.Connection,
        model_id: str,
        vector: npt.NDArray[np.float32],
        limit: int,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]] | None:
        """(id, similarity) of the ``limit`` cards nearest to ``vector``, best first, by the database's index;
        None when it has none that answers (the in-memory index does)."""
        ...

    def warm_up(self, conn: sa.Connection, model_id: str) -> int | None:
        """Make the index of every space of ``model_id`` ready; how many vectors it holds, or None when the
        in-memory index answers for it (``nearest``)."""
        ...


class LibraryBackend(Protocol):
    """One database's way of doing what the library needs of it."""

    @property
    def engine(self) -> sa.Engine: ...
    @property
    def search(self) -> LibrarySearch: ...
    @property
    def vectors(self) -> LibraryVectors: ...
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

    def defer_foreign_keys(self, conn: sa.Connection) -> bool:
        """Check the transaction's foreign keys when it commits rather than after each statement, where the
        database can (then rows may be written before the rows they refer to); False where it cannot."""
        ...

    def upsert(self, session: SessionOrConnection, table: sa.Table, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert ``rows`` into ``table``, a row whose primary key is taken already updating that row instead."""
        ...

    @property
    def ids_in_commit_order(self) -> bool:
        """Whether rows given growing ids become visible in the order of their ids (one writer at a time);
        False where a transaction holding a smaller id may commit after one holding a greater one."""
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


# the backend of each engine a backend made (``backend_of``)
_owners: weakref.WeakKeyDictionary[sa.Engine, LibraryBackend] = weakref.WeakKeyDictionary()


def owns(backend: LibraryBackend, engine: sa.Engine) -> None:
    """Record that ``engine``'s connections are ``backend``'s (its constructor calls this)."""
    _owners[engine] = backend


def backend_of(bind: SessionOrConnection) -> LibraryBackend:
    """The backend whose engine ``bind`` (a session or a connection) works with: how code that is handed only a
    transaction reaches its database's own SQL."""
    engine = bind.engine if isinstance(bind, sa.Connection) else bind.get_bind().engine
    try:
        return _owners[engine]
    except KeyError:
        raise RuntimeError(f"{engine!r} belongs to no library backend (db.database opens them)") from None


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
