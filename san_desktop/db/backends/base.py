"""What a library's database must do, written once per database (as River's ``riverdriver`` and huey's
``BaseStorage`` are): ``db.backends.sqlite`` for a file in the data folder, ``db.backends.postgres`` for a
database on a server. Above this seam nothing asks which database it is on: ``db.database.Database`` holds a
backend and hands every question that has a database's answer to it."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

import sqlalchemy as sa

T = TypeVar("T")

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from sqlalchemy.orm import Session

    from san_desktop.core.enums import AttemptOutcome, JobStatus, JobType
    from san_desktop.core.errors import DatabaseUnreachableError
    from san_desktop.core.jobs import AttemptRecord, Claim, JobRecord

# a transaction to write in: an ORM session (``Database.write``) or a Core connection (``write_connection``)
SessionOrConnection: TypeAlias = "Session | sa.Connection"
# What a listener is called with: the payloads of the notifications that arrived together, or None when what
# was written is unknown (its channel was just listened to, the first time or after a lost connection).
Notified: TypeAlias = "Callable[[frozenset[str] | None], None]"
# What is told of a write nobody waited for (``write_unit_later``): its work's result, or what it raised
Written: TypeAlias = "Callable[[Any, BaseException | None], None]"

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


class JobsDriver(Protocol):
    """The SQL of the job rows (``async_jobs``, ``job_attempts``), written once for each database in its own
    dialect (River's ``riverdriver``): on raw DB-API cursors, since the queue runs these for every job and
    SQLAlchemy's statement and result bookkeeping cost several times the SQL itself. Each method runs on the
    cursor it is given, inside whatever transaction that cursor's connection has open (the caller commits). A
    driver checks no transition and tells no one: the job store (``queue.store``) checks every change against
    its status table and announces it once committed."""

    # --- cursors ------------------------------------------------------------------------------
    def cursor_in(self, conn: sa.Connection) -> AbstractContextManager[Any]:
        """A cursor on ``conn``'s DB-API connection, inside whatever transaction ``conn`` has open."""
        ...

    def reading(self) -> AbstractContextManager[Any]:
        """A cursor on a connection of its own, for reads outside any write."""
        ...

    # --- enqueue ------------------------------------------------------------------------------
    def insert(self, cursor: Any, job: JobRecord) -> bool:
        """Insert a new job; False, and nothing written, when its work (type and target) has an active job."""
        ...

    def insert_many(self, cursor: Any, jobs: Sequence[JobRecord]) -> None:
        """Insert new jobs of targets that have none (a duplicate fails the transaction)."""
        ...

    def active_job_id(self, cursor: Any, job_type: JobType, target_id: str) -> str | None: ...

    # --- claims, leases and finishes ----------------------------------------------------------------
    def claim(
        self,
        cursor: Any,
        session_id: str,
        job_types: Collection[JobType],
        now: datetime,
        lease_until: datetime,
        limit: int,
    ) -> list[JobRecord]:
        """Take up to ``limit`` of the oldest runnable jobs and start each one's attempt on its row (its number,
        start, session, lease and a run id of its own); the jobs as taken, oldest first. Claims of several
        processes or machines at once never take the same job, nor wait for each other's."""
        ...

    def still_owned(self, cursor: Any, claim: Claim) -> bool:
        """Whether the claim's job is still the claim's (running, its session's, the same attempt)."""
        ...

    def renew_leases(self, cursor: Any, claims: Iterable[Claim], lease_until: datetime) -> set[str]:
        """Leases run until ``lease_until`` for the jobs still their claims' (their ids); ``updated_at`` stays."""
        ...

    def finish(
        self,
        cursor: Any,
        claim: Claim,
        values: Mapping[str, object],
        now: datetime,
        *,
        spend_attempt: bool = True,
        held: Claim | None = None,
    ) -> tuple[bool, bool | None]:
        """Set ``values`` (columns of the job row) and ``updated_at`` on the claim's job if it is still the
        claim's (one attempt fewer without ``spend_attempt``); whether it was written, and with ``held``,
        whether that claim's job is still its own, looked at by the same statement (None when not written)."""
        ...

    def record_attempt(
        self, cursor: Any, claim: Claim, outcome: AttemptOutcome, error_text: str | None, now: datetime
    ) -> None:
        """The claim's attempt, ended without success, in its job's history (once, whoever tries again)."""
        ...

    def wake(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> list[JobRecord]:
        """Jobs of ``job_types`` waiting for a later time run now; the jobs as woken."""
        ...

    # --- moving jobs between statuses --------------------------------------------------------------
    def transition(
        self, cursor: Any, job_ids: Sequence[str], new: JobStatus, sources: Sequence[JobStatus], now: datetime
    ) -> list[tuple[JobRecord, JobStatus]]:
        """The jobs of ``job_ids`` in one of ``sources`` go to ``new`` (not PROCESSING: a claim's), with what
        ``new`` sets beside: back to PENDING one fresh attempt, only the newest job of each work (type and target)
        among them and none whose work is active already; each job moved, with its status before."""
        ...

    def ids_of_targets(self, cursor: Any, target_ids: Sequence[str], statuses: Sequence[JobStatus]) -> list[str]:
        """The jobs of ``target_ids`` in one of ``statuses``."""
        ...

    def delete_of_targets(self, cursor: Any, target_ids: Sequence[str], keep: Collection[str]) -> int:
        """Delete the jobs of ``target_ids`` (their attempts go with them) but those of ``keep``; how many."""
        ...

    # --- upkeep (the recovery sweep's) ----------------------------------------------------------------
    def orphans(self, cursor: Any, live_session: str, now: datetime, *, limit: int | None = None) -> list[JobRecord]:
        """Running jobs no live session answers for: of a session that ended (or of none), or whose lease ran out
        while a session other than ``live_session`` held them."""
        ...

    def interrupt(self, cursor: Any, job: JobRecord, now: datetime, text: str) -> int:
        """The running attempt of ``job`` joins its history as INTERRUPTED; how many times it was interrupted."""
        ...

    def resume(self, cursor: Any, job: JobRecord, now: datetime, failed: str | None) -> JobRecord | None:
        """The interrupted ``job`` back to PENDING without spending its attempt, or with ``failed`` (the error)
        FAILED for good; None when it is no longer that attempt (another machine's sweep took it)."""
        ...

    def stalled(self, cursor: Any, live_session: str, started_before: datetime, now: datetime) -> list[str]:
        """Jobs ``live_session`` runs that started before ``started_before`` or whose lease ran out."""
        ...

    def overdue(self, cursor: Any, before: datetime, limit: int) -> list[str]:
        """Up to ``limit`` waiting jobs that were due before ``before``."""
        ...

    def retry_transient_failures(self, cursor: Any, now: datetime) -> list[JobRecord]:
        """FAILED jobs whose error was transient and that have attempts left back to PENDING: only the newest job
        of a work, and none while another job of that work is active."""
        ...

    def prune(self, cursor: Any, completed_before: datetime, failed_before: datetime | None, limit: int) -> int:
        """Delete up to ``limit`` completed jobs that ended before ``completed_before``, and failed or cancelled
        ones before ``failed_before`` (none when None) but a failure the sweep will still retry; how many."""
        ...

    # --- reading ----------------------------------------------------------------------------------
    def get(self, cursor: Any, job_id: str) -> JobRecord | None: ...
    def attempts(self, cursor: Any, job_id: str) -> list[AttemptRecord]:
        """The rows of the job's history (attempts that did not succeed), oldest first."""
        ...

    def changed_since(self, cursor: Any, since: datetime, limit: int, after_id: str) -> list[JobRecord]:
        """Jobs whose row changed after ``since`` (or at it, with an id above ``after_id``), oldest change first."""
        ...

    def jobs_named(self, cursor: Any, ids: Sequence[str]) -> list[JobRecord]: ...
    def has_runnable(self, cursor: Any, job_types: Collection[JobType], now: datetime) -> bool: ...
    def waiting_summary(
        self, cursor: Any, job_types: Collection[JobType], now: datetime
    ) -> tuple[int, datetime] | None:
        """How many jobs of ``job_types`` wait for a later time, and when the first is due; None when none."""
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

    @property
    def jobs(self) -> JobsDriver:
        """The job rows' SQL (``JobsDriver``)."""
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

    def write_unit(self, work: Callable[[Any], T]) -> T:
        """``work(cursor)`` in a write transaction, and its result once that committed; what it raised
        otherwise, nothing of it written. The transaction may hold other callers' units too (SQLite's group
        commit): each is written whole or not at all, and one that raises fails alone."""
        ...

    def committed(self) -> None:
        """A write transaction of the app (``Database.write``, ``write_connection``) committed: the backend's
        upkeep may follow (SQLite's checkpoint, run by its writer thread)."""
        ...

    def write_unit_later(self, work: Callable[[Any], T], then: Written) -> None:
        """``write_unit`` without waiting for it: ``then(result, error)`` is called (on another thread) once it
        was written or failed. The units handed over this way are written in the order they were handed over."""
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
