"""SQLite's writer thread (``db.backends.sqlite.writer.GroupWriter``): the units waiting when it gets to them are
committed in one transaction; a writer of the app that waits for the turn (a person's capture) goes before the
next batch; closing the library answers what still waits; a unit cannot wait for another; the app's writes are
checkpointed by the writer, not inside their commits."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import sqlalchemy as sa

from san_desktop.db.backends import group_writer
from san_desktop.db.backends.group_writer import GroupWriter, WriterClosedError
from san_desktop.db.backends.sqlite.backend import SqliteBackend
from san_desktop.db.database import Database

WAIT_SECONDS = 30  # a bound, not a pace


@pytest.fixture
def library(sqlite_db: Database) -> Database:
    return sqlite_db


def _backend(library: Database) -> SqliteBackend:
    backend = library.backend
    assert isinstance(backend, SqliteBackend)
    return backend


def _checkpointed(writer: GroupWriter, monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once the writer ran a checkpoint."""
    ran = threading.Event()
    real = writer._checkpoint_now

    def checkpoint() -> None:
        real()
        ran.set()

    monkeypatch.setattr(writer, "_checkpoint_now", checkpoint)
    return ran


class _Busy:
    """A unit that holds the writer until let go, so that others wait for it together."""

    def __init__(self, library: Database) -> None:
        self.started, self.go_on = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=library.write_unit, args=(self._work,))
        self.thread.start()
        assert self.started.wait(WAIT_SECONDS)

    def _work(self, _cursor: Any) -> None:
        self.started.set()
        assert self.go_on.wait(WAIT_SECONDS)

    def let_go(self) -> None:
        self.go_on.set()
        self.thread.join(WAIT_SECONDS)


def test_units_that_wait_together_are_committed_in_one_transaction(library: Database) -> None:
    writer = _backend(library)._group
    busy = _Busy(library)
    before = writer.batches
    told: list[BaseException | None] = []
    done = threading.Event()

    def tell(_result: Any, error: BaseException | None) -> None:
        told.append(error)
        if len(told) == 10:
            done.set()

    for _ in range(10):
        library.write_unit_later(lambda cursor: cursor.execute("SELECT 1").fetchall(), tell)
    busy.let_go()
    assert done.wait(WAIT_SECONDS)
    assert told == [None] * 10
    assert writer.batches - before == 2  # the busy unit's, and one for the ten that waited behind it


def test_a_writer_waiting_for_the_turn_goes_before_the_next_batch(library: Database) -> None:
    backend = _backend(library)
    order: list[str] = []
    busy = _Busy(library)
    told = threading.Event()
    library.write_unit_later(lambda _cursor: order.append("batch"), lambda *_: told.set())

    def person() -> None:
        with backend.write_turn():
            order.append("person")

    thread = threading.Thread(target=person)
    thread.start()
    with backend._gate:  # the person waits for the turn the busy unit's batch holds
        assert backend._gate.wait_for(lambda: backend._waiting, WAIT_SECONDS)
    busy.let_go()
    thread.join(WAIT_SECONDS)
    assert told.wait(WAIT_SECONDS)
    assert order == ["person", "batch"]


def test_closing_the_library_answers_the_units_still_waiting(library: Database) -> None:
    busy = _Busy(library)
    told: list[BaseException | None] = []
    answered = threading.Event()

    def tell(_result: Any, error: BaseException | None) -> None:
        told.append(error)
        answered.set()

    library.write_unit_later(lambda cursor: cursor.execute("SELECT 1").fetchall(), tell)
    closing = threading.Thread(target=library.dispose)
    closing.start()
    busy.let_go()
    closing.join(WAIT_SECONDS)
    assert answered.wait(WAIT_SECONDS)
    assert told == [None]  # handed over before the close: written, not dropped
    with pytest.raises(WriterClosedError, match="nothing of it was saved"):
        library.write_unit(lambda cursor: cursor.execute("SELECT 1").fetchall())


def test_a_unit_that_waits_for_another_is_refused_rather_than_waiting_for_itself(library: Database) -> None:
    with pytest.raises(RuntimeError, match="wait for itself"):
        library.write_unit(lambda _cursor: library.write_unit(lambda cursor: None))
    assert library.write_unit(lambda cursor: cursor.execute("SELECT 2").fetchone()[0]) == 2  # the writer goes on


def test_the_apps_own_writes_are_checkpointed_by_the_writer_between_its_batches_never_inside_a_commit(
    library: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _backend(library)._group
    monkeypatch.setattr(group_writer, "CHECKPOINT_BATCHES", 3)
    monkeypatch.setattr(writer, "_checkpoint", "PRAGMA wal_checkpoint(TRUNCATE)")  # (an empty log: easy to see)
    ran = _checkpointed(writer, monkeypatch)
    with library.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one() == 0  # none inside a commit
    wal = library.file.with_name(library.file.name + "-wal")
    for value in ("1", "2", "3"):
        with library.write() as session:
            session.execute(
                sa.text("INSERT INTO library_settings (name, value, updated_at) VALUES (:name, :value, :now)"),
                {"name": f"setting-{value}", "value": value, "now": "2026-12-07 00:00:00.000000"},
            )
    assert ran.wait(WAIT_SECONDS)  # the third write woke the writer, which checkpointed
    assert wal.stat().st_size == 0


def test_what_was_written_is_checkpointed_once_the_writer_is_idle(
    library: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _backend(library)._group
    monkeypatch.setattr(writer, "_checkpoint", "PRAGMA wal_checkpoint(TRUNCATE)")  # (an empty log: easy to see)
    ran = _checkpointed(writer, monkeypatch)
    wal = library.file.with_name(library.file.name + "-wal")
    library.write_unit(
        lambda cursor: cursor.execute(
            "INSERT INTO library_settings (name, value, updated_at) VALUES ('a', '1', '2026-12-07 00:00:00.000000')"
        )
    )
    # one commit, far from the CHECKPOINT_BATCHES after which a busy writer checkpoints: emptied once it is idle
    assert ran.wait(WAIT_SECONDS)
    assert wal.stat().st_size == 0
