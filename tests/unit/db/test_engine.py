from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa

from san_desktop.core.enums import ErrorKind
from san_desktop.core.errors import DatabaseLockedError, SqliteDriverError
from san_desktop.db.backends.sqlite import backend as sqlite_backend
from san_desktop.db.backends.sqlite.backend import SqliteBackend
from san_desktop.db.backends.sqlite.engine import choose_driver, make_engine
from san_desktop.db.database import Database, open_database
from san_desktop.jobs.classify import classify
from tests.support.db import stdlib_loads_sqlite_vec


def _fake_stdlib(*, loads_extensions: bool) -> ModuleType:
    """A stand-in for the stdlib sqlite3 module of a Python built with or without extension loading."""

    class Connection:
        def __init__(self) -> None:
            if loads_extensions:
                self.enable_load_extension = lambda enabled: None

        def close(self) -> None:
            pass

    module = ModuleType("fake_sqlite3")
    module.connect = lambda *_args, **_kwargs: Connection()  # type: ignore[attr-defined]
    module.sqlite_version = "3.99.0"  # type: ignore[attr-defined]
    return module


def test_stdlib_is_used_when_it_can_load_extensions() -> None:
    stdlib = _fake_stdlib(loads_extensions=True)
    driver = choose_driver(stdlib=stdlib)
    assert driver.name == "sqlite3"
    assert driver.module is stdlib


def test_sqlean_is_used_when_stdlib_cannot_load_extensions() -> None:
    driver = choose_driver(stdlib=_fake_stdlib(loads_extensions=False))
    assert driver.name == "sqlean"
    assert driver.module.__name__ == "sqlean"
    assert callable(getattr(driver.module.connect(":memory:"), "enable_load_extension", None))


def test_forcing_sqlite3_without_extension_support_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAN_SQLITE_DRIVER", "sqlite3")
    with pytest.raises(SqliteDriverError, match="cannot load extensions"):
        choose_driver(stdlib=_fake_stdlib(loads_extensions=False))


def test_environment_can_force_sqlean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAN_SQLITE_DRIVER", "sqlean")
    assert choose_driver(stdlib=_fake_stdlib(loads_extensions=True)).name == "sqlean"


def test_unknown_driver_name_is_rejected() -> None:
    with pytest.raises(SqliteDriverError, match="Unknown SQLite driver"):
        choose_driver("postgres")


def test_choice_on_this_python_matches_its_sqlite3() -> None:
    assert choose_driver().name == ("sqlite3" if stdlib_loads_sqlite_vec() else "sqlean")


@pytest.mark.parametrize("driver_name", ["sqlean", "auto"])
def test_engine_loads_sqlite_vec_and_sets_pragmas(tmp_path: Path, driver_name: str) -> None:
    engine = make_engine(tmp_path / "t.db", choose_driver(driver_name))
    try:
        with engine.connect() as conn:
            pragma: Any = SimpleNamespace(
                **{
                    name: conn.exec_driver_sql(f"PRAGMA {name}").scalar_one()
                    for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous", "cache_size")
                }
            )
            assert conn.exec_driver_sql("SELECT vec_version()").scalar_one().startswith("v")
        assert pragma.journal_mode == "wal"
        assert pragma.foreign_keys == 1
        assert pragma.busy_timeout == 30000
        assert pragma.synchronous == 1  # NORMAL
        assert -pragma.cache_size * 1024 >= 16 * 1024 * 1024
    finally:
        engine.dispose()


def test_immediate_transactions_take_the_write_lock_up_front(tmp_path: Path) -> None:
    driver = choose_driver()
    engine = make_engine(tmp_path / "t.db", driver)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (x)")
        with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as holder, holder.begin():
            other = driver.module.connect(str(tmp_path / "t.db"), timeout=0)
            try:
                with pytest.raises(driver.module.OperationalError, match="locked"):
                    other.execute("BEGIN IMMEDIATE")
            finally:
                other.close()
    finally:
        engine.dispose()


def test_a_database_locked_elsewhere_is_explained(tmp_path: Path) -> None:
    opened = open_database(tmp_path / "san.db")
    opened.dispose()
    assert isinstance(opened.backend, SqliteBackend)
    driver = opened.backend.driver
    impatient = make_engine(opened.file, driver, busy_timeout_ms=50)  # not 30 s in a test
    db = replace(opened, backend=SqliteBackend(opened.file, driver, impatient))
    other = driver.module.connect(str(db.file), timeout=0)
    other.isolation_level = None
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with (
            pytest.raises(DatabaseLockedError, match="locked by another program") as locked,
            db.write() as session,
        ):
            session.execute(sa.text("SELECT 1"))  # the first statement takes the write lock
        assert classify(locked.value).kind is ErrorKind.TRANSIENT  # a job would try again later
    finally:
        other.execute("ROLLBACK")
        other.close()
        db.dispose()


def test_writers_of_one_process_take_turns(tmp_path: Path) -> None:
    db = open_database(tmp_path / "san.db")
    holding = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first_writer() -> None:
        with db.write() as session:
            session.execute(sa.text("CREATE TABLE turns (n INTEGER)"))
            holding.set()
            release.wait(30)
            order.append("first")

    worker = threading.Thread(target=first_writer)
    worker.start()
    try:
        assert holding.wait(30)
        second = threading.Thread(target=lambda: _insert_turn(db, order))
        second.start()
        release.set()
        second.join(30)
        assert order == ["first", "second"]  # the second waited for the first's commit, and was not refused
        with db.sessions() as session:
            assert session.scalar(sa.text("SELECT count(*) FROM turns")) == 1
    finally:
        release.set()
        worker.join(30)
        db.dispose()


def _insert_turn(db: Database, order: list[str]) -> None:
    with db.write() as session:
        session.execute(sa.text("INSERT INTO turns VALUES (1)"))
        order.append("second")


def test_a_write_turn_not_given_in_time_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = open_database(tmp_path / "san.db")
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_MS", 50)  # not 30 s in a test
    holding = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with db.write():
            holding.set()
            release.wait(30)

    worker = threading.Thread(target=holder)
    worker.start()
    try:
        assert holding.wait(30)
        with pytest.raises(DatabaseLockedError, match="busy with another task of SAN Desktop"), db.write_cursor():
            pass
    finally:
        release.set()
        worker.join(30)
        db.dispose()
