"""One writer thread with group commit, for the units of work nobody else's transaction must come between.

On SQLite (one writer at a time anyway) every unit of the job store goes here: a job's completion and the claim
of the next, a release, a failure, a lease renewal, a bulk retry. On PostgreSQL, the completions nobody waits for
(River's completer): the jobs' own writers write at once there, each on a connection of its own. The thread owns
its connection; it runs the units waiting when it gets to them in one transaction and commits once (one WAL write
for many jobs), then answers each caller. A unit that raises is not allowed to fail the others: the batch is
rolled back and each of its units runs again alone, so only the bad one fails. Each unit stays atomic: it is
committed whole or not at all, with whatever it was batched with.

The thread takes its backend's write turn for each batch, as every other writer of the process does (an ORM
write, a capture): a writer that waits for the turn gets it before the next batch starts, so a person's action
waits for one batch at most, never for a drain. SQLite's WAL checkpoints run here too, between batches, after
the callers were answered: never inside the commit a worker waits for.
"""

from __future__ import annotations

import _thread
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
Work = Callable[[Any], T]

# Units committed together at most: a batch holds the turn for its whole length, and a person's write waits for
# the batch under way.
MAX_UNITS = 64
# Commits between two checkpoints (``checkpoint``: the writer's and the app's other writes): a handful of pages
# each, so about the thousand pages at which SQLite's own automatic checkpoint (off on the app's connections:
# it would run inside the commit a worker or a person waits for) would run.
CHECKPOINT_BATCHES = 200
# ... and, after writes, once the writer was idle this long (a drain's end, a person's pause): the log does not
# wait for the next busy spell, nor make closing the library slow (the last connection's close checkpoints it)
IDLE_CHECKPOINT_SECONDS = 0.25


class WriterClosedError(RuntimeError):
    """The library was closed while a write waited for its turn."""

    def __init__(self) -> None:
        super().__init__("The library was closed before this change could be written; nothing of it was saved.")


class _Unit(Generic[T]):
    __slots__ = ("answered", "done", "error", "result", "then", "work")

    def __init__(self, work: Work[T], then: Callable[[T | None, BaseException | None], None] | None = None) -> None:
        self.work = work
        self.then = then  # None: a caller waits for the answer
        self.result: T | None = None
        self.error: BaseException | None = None
        self.answered = False
        # a plain lock, held until the unit is answered: the cheapest way for one thread to wait for another
        self.done = _thread.allocate_lock()
        if then is None:
            self.done.acquire()

    def answer(self, error: BaseException | None = None) -> None:
        self.error = error
        self.answered = True
        if self.then is None:
            self.done.release()

    def tell(self) -> None:
        """A unit nobody waits for: its callback, once the writer gave the turn back."""
        if self.then is not None:
            try:
                self.then(self.result, self.error)
            except Exception:
                log.exception("A write's callback failed")


_CLOSE = object()


def _nothing(_cursor: Any) -> None:
    pass


def _ignored(_result: Any, _error: BaseException | None) -> None:
    pass


class WriterConnection(Protocol):
    """How a ``GroupWriter``'s connection is made, looked at and given up (each backend's)."""

    begin: str  # the statement that begins a write transaction

    def connect(self) -> Any:
        """A DB-API connection in autocommit mode, set up for the writer."""
        ...

    def usable(self, connection: Any) -> bool:
        """False: lost (the server restarted); it is given up and another made."""
        ...

    def in_transaction(self, connection: Any) -> bool: ...

    def close(self, connection: Any) -> None: ...


class GroupWriter:
    """Runs units of work (``work(cursor) -> result``) on one thread, committing those waiting together.

    ``connection``: how the writer's DB-API connection is made (autocommit mode: the writer says ``begin``), looked
    at and given up; ``explained``: a driver error in words (locked, full, damaged, the server away), or itself;
    ``errors``: the driver's error classes; ``take_turn``/``give_turn``: the backend's write turn (``take_turn``
    returns False when it was not given in time, and the batch fails with ``locked()``); ``checkpoint``: a
    statement to run between batches now and then (SQLite's WAL checkpoint)."""

    def __init__(
        self,
        connection: WriterConnection,
        explained: Callable[[Exception], Exception],
        errors: tuple[type[Exception], ...],
        *,
        take_turn: Callable[[], bool] = lambda: True,
        give_turn: Callable[[], None] = lambda: None,
        locked: Callable[[], Exception] = lambda: RuntimeError("no turn to write"),
        checkpoint: str | None = None,
        name: str = "san-writer",
    ) -> None:
        self._connection_of = connection
        self._take_turn = take_turn
        self._give_turn = give_turn
        self._explained = explained
        self._errors = errors
        self._locked = locked
        self._checkpoint = checkpoint
        self._name = name
        self._units: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._ident: int | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._connection: Any = None
        self._since_checkpoint = 0  # commits
        self.batches = 0  # transactions committed, and units in them: what group commit saved, for the tests
        self.units = 0

    def run(self, work: Work[T]) -> T:
        """Run ``work(cursor)`` in a write transaction, possibly shared with other units, and return what it
        returned once the transaction committed; raise what it raised (nothing of it is written then), or the
        database's condition in words (``DatabaseLockedError``, ``StorageFullError``)."""
        if threading.get_ident() == self._ident:
            raise RuntimeError("a unit of work may not wait for another: it would wait for itself")
        unit: _Unit[T] = _Unit(work)
        self._put(unit)
        unit.done.acquire()
        if unit.error is not None:
            raise unit.error
        return unit.result  # type: ignore[return-value]

    def run_later(self, work: Work[T], then: Callable[[T | None, BaseException | None], None]) -> None:
        """``run`` without waiting: ``then(result, error)`` is called on the writer's thread once the unit was
        committed or failed (``WriterClosedError`` when the library closed first). Units are written in the
        order they were handed over: a ``run`` after this one returns once this one was written too."""
        self._put(_Unit(work, then))

    def _put(self, unit: _Unit[Any]) -> None:
        self._start()
        self._units.put(unit)
        if self._closed:  # closed meanwhile: the thread may have ended before it took the unit
            self._answer_left()

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._closed:
                raise WriterClosedError()
            if self._thread is None:
                thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                thread.start()
                self._thread = thread

    def committed_elsewhere(self) -> None:
        """A write of the library committed outside this writer (an ORM write of the app): it counts toward the
        next checkpoint, which the writer runs between its batches (woken for it when it is idle)."""
        if self._checkpoint is None or self._closed:
            return
        self._since_checkpoint += 1  # (an estimate: threads may count at once)
        if self._since_checkpoint == CHECKPOINT_BATCHES:
            self.run_later(_nothing, _ignored)

    def close(self) -> None:
        """Write what was handed over, stop the thread and give its connection up; what is handed over from now
        on is answered with ``WriterClosedError``."""
        with self._start_lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._units.put(_CLOSE)
            thread.join()
        self._answer_left()
        connection, self._connection = self._connection, None
        if connection is not None:
            self._connection_of.close(connection)

    def _answer_left(self) -> None:
        while True:
            try:
                unit = self._units.get_nowait()
            except queue.Empty:
                return
            if unit is not _CLOSE:
                unit.answer(WriterClosedError())
                unit.tell()

    # --- the writer's thread -----------------------------------------------------------------------

    def _loop(self) -> None:
        self._ident = threading.get_ident()
        while True:
            owed = self._checkpoint is not None and self._since_checkpoint > 0
            try:
                first = self._units.get(timeout=IDLE_CHECKPOINT_SECONDS if owed else None)
            except queue.Empty:  # quiet for a while: what was written since the last checkpoint goes in now
                self._checkpoint_now()
                continue
            if first is _CLOSE:
                return
            batch = [first]
            closing = False
            while len(batch) < MAX_UNITS:
                try:
                    unit = self._units.get_nowait()
                except queue.Empty:
                    break
                if unit is _CLOSE:
                    closing = True
                    break
                batch.append(unit)
            try:
                self._write(batch)
            except BaseException as exc:  # a bug here must not leave callers waiting for ever
                log.exception("The library's writer failed")
                for unit in batch:
                    if not unit.answered:
                        unit.answer(exc)
            for unit in batch:
                unit.tell()
            if closing:
                return
            self._checkpoint_if_due()

    def _write(self, batch: list[_Unit[Any]]) -> None:
        if not self._take_turn():
            for unit in batch:
                unit.answer(self._locked())
            return
        try:
            cursor = self._cursor()
            try:
                failed = self._together(cursor, batch)
                if failed is not None and len(batch) == 1:
                    batch[0].answer(failed)
                elif failed is not None:
                    for unit in batch:  # one of them is bad: each on its own, so that only it fails
                        self._together(cursor, [unit], alone=True)
            finally:
                cursor.close()
        finally:
            self._give_turn()

    def _together(self, cursor: Any, batch: list[_Unit[Any]], *, alone: bool = False) -> BaseException | None:
        """Run the units in one transaction and answer them; or roll back and return what a unit raised
        (answering none, unless ``alone``: then its one unit is answered with it). A failure of the transaction
        itself (locked, full) answers every unit with it."""
        try:
            cursor.execute(self._connection_of.begin)
        except self._errors as exc:
            self._answer_all(batch, self._said(exc))
            return None
        for unit in batch:
            try:
                unit.result = unit.work(cursor)
            except BaseException as exc:
                self._roll_back(cursor)
                error = self._said(exc) if isinstance(exc, self._errors) else exc
                if alone:
                    unit.answer(error)
                return error
        try:
            cursor.execute("COMMIT")
        except self._errors as exc:
            self._roll_back(cursor)
            self._answer_all(batch, self._said(exc))
            return None
        self.batches += 1
        self.units += len(batch)
        self._since_checkpoint += 1
        self._answer_all(batch, None)
        return None

    def _said(self, exc: Exception) -> Exception:
        """A driver's error in words, caused by it."""
        said = self._explained(exc)
        if said is not exc:
            said.__cause__ = exc
        return said

    def _answer_all(self, batch: list[_Unit[Any]], error: BaseException | None) -> None:
        for unit in batch:
            unit.answer(error)

    def _roll_back(self, cursor: Any) -> None:
        try:
            if self._connection_of.in_transaction(self._connection):
                cursor.execute("ROLLBACK")
        except self._errors:
            log.warning("Could not roll back a write of the library", exc_info=True)

    def _cursor(self) -> Any:
        if self._connection is not None and not self._connection_of.usable(self._connection):
            lost, self._connection = self._connection, None  # (the server restarted, the network dropped)
            self._connection_of.close(lost)
        if self._connection is None:
            self._connection = self._connection_of.connect()
        return self._connection.cursor()

    def _checkpoint_if_due(self) -> None:
        if self._checkpoint is not None and self._since_checkpoint >= CHECKPOINT_BATCHES:
            self._checkpoint_now()

    def _checkpoint_now(self) -> None:
        self._since_checkpoint = 0
        if self._checkpoint is None or not self._take_turn():
            return
        try:
            cursor = self._cursor()
            try:
                cursor.execute(self._checkpoint)
            finally:
                cursor.close()
        except self._errors:
            log.warning("Could not checkpoint the library's write-ahead log", exc_info=True)
        finally:
            self._give_turn()
