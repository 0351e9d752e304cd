"""The job store's units of work on each backend (``Database.write_unit``, ``write_unit_later``): each is written
whole or not at all; one that raises fails alone, whatever it was committed with (SQLite's writer and
PostgreSQL's completer commit the units waiting together); the units nobody waits for are written in the order
they were handed over."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.db.database import Database
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from tests.support.jobs import fast_settings

WAIT_SECONDS = 30  # a bound, not a pace


class _BadUnitError(Exception):
    pass


def _record(store: JobStore, target: str) -> JobRecord:
    return store._new_record(JobType.CARD_ANALYSIS, target, None, None, store.clock())


def _stored(library: Database, records: list[JobRecord]) -> set[str]:
    with library.backend.jobs.reading() as cursor:
        return {record.target_id for record in records if library.backend.jobs.get(cursor, record.id) is not None}


class _Told:
    """What ``write_unit_later`` told, by unit."""

    def __init__(self, count: int) -> None:
        self.answers: dict[str, tuple[Any, BaseException | None]] = {}
        self._all = threading.Event()
        self._count = count
        self._lock = threading.Lock()

    def of(self, name: str) -> Any:
        def told(result: Any, error: BaseException | None) -> None:
            with self._lock:
                self.answers[name] = (result, error)
                if len(self.answers) == self._count:
                    self._all.set()

        return told

    def wait(self) -> None:
        assert self._all.wait(WAIT_SECONDS)


def test_a_unit_that_raises_fails_alone_and_writes_nothing_while_the_units_beside_it_are_written(
    library: Database,
) -> None:
    store = JobStore(library, fast_settings())
    records = {name: _record(store, name) for name in ("first", "good-1", "bad", "good-2")}
    busy, go_on = threading.Event(), threading.Event()

    def first(cursor: Any) -> str:
        library.backend.jobs.insert(cursor, records["first"])
        busy.set()
        assert go_on.wait(WAIT_SECONDS)  # the others are handed over meanwhile: they wait together
        return "first"

    def good(name: str) -> Any:
        def unit(cursor: Any) -> str:
            library.backend.jobs.insert(cursor, records[name])
            return name

        return unit

    def bad(cursor: Any) -> str:
        library.backend.jobs.insert(cursor, records["bad"])  # written, then the unit fails: it must not stay
        raise _BadUnitError("this unit fails")

    told = _Told(4)
    library.write_unit_later(first, told.of("first"))  # the writer waits in it while the others are handed over
    assert busy.wait(WAIT_SECONDS)
    for name, unit in (("good-1", good("good-1")), ("bad", bad), ("good-2", good("good-2"))):
        library.write_unit_later(unit, told.of(name))
    go_on.set()
    told.wait()

    assert told.answers["first"] == ("first", None)
    assert told.answers["good-1"] == ("good-1", None)
    assert told.answers["good-2"] == ("good-2", None)
    result, error = told.answers["bad"]
    assert result is None
    assert isinstance(error, _BadUnitError)
    assert _stored(library, list(records.values())) == {"first", "good-1", "good-2"}


def test_units_nobody_waits_for_are_written_in_the_order_they_were_handed_over(library: Database) -> None:
    store = JobStore(library, fast_settings())
    earlier = [_record(store, f"earlier-{index}") for index in range(20)]
    told = _Told(len(earlier) + 1)

    def inserting(record: JobRecord) -> Callable[[Any], bool]:
        return lambda cursor: library.backend.jobs.insert(cursor, record)

    for record in earlier:
        library.write_unit_later(inserting(record), told.of(record.id))

    def look(cursor: Any) -> int:
        return sum(library.backend.jobs.get(cursor, record.id) is not None for record in earlier)

    library.write_unit_later(look, told.of("look"))
    told.wait()
    assert told.answers["look"] == (len(earlier), None)  # every earlier unit was in the database by then
    assert all(error is None for _, error in told.answers.values())


def test_a_unit_that_raises_alone_raises_to_its_caller(library: Database) -> None:
    store = JobStore(library, fast_settings())
    record = _record(store, "alone")

    def bad(cursor: Any) -> None:
        library.backend.jobs.insert(cursor, record)
        raise _BadUnitError("alone")

    with pytest.raises(_BadUnitError):
        library.write_unit(bad)
    assert _stored(library, [record]) == set()
    assert library.write_unit(lambda cursor: library.backend.jobs.insert(cursor, record)) is True
    with library.backend.jobs.reading() as cursor:
        stored = library.backend.jobs.get(cursor, record.id)
    assert stored is not None
    assert stored.status is JobStatus.PENDING
