"""SQLite's errors are told apart by their result code, with either driver and through SQLAlchemy's
wrappers, never by their message: a message that merely holds "locked" or "malformed" is neither."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
import sqlalchemy as sa

from san_desktop.core.errors import is_storage_full
from san_desktop.core.sqlite_codes import is_constraint, is_damaged, is_locked, sqlite_code


@pytest.fixture(params=["sqlite3", "sqlean"])  # the two drivers the app may use (db/driver.py)
def module(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


def test_a_lock_held_by_another_connection_is_locked(module: ModuleType, tmp_path: Path) -> None:
    path = str(tmp_path / "a.db")
    holder = module.connect(path, timeout=0, isolation_level=None)
    holder.execute("CREATE TABLE t (a)")
    holder.execute("BEGIN IMMEDIATE")
    other = module.connect(path, timeout=0, isolation_level=None)
    with pytest.raises(module.OperationalError) as caught:
        other.execute("BEGIN IMMEDIATE")
    assert is_locked(caught.value)
    assert not is_damaged(caught.value)
    wrapped = sa.exc.OperationalError("BEGIN IMMEDIATE", {}, caught.value)  # as SQLAlchemy raises it
    assert is_locked(wrapped)
    holder.close()
    other.close()


def test_a_message_that_only_says_locked_is_not_a_lock(module: ModuleType) -> None:
    conn = module.connect(":memory:")
    with pytest.raises(module.OperationalError, match="locked") as caught:
        conn.execute("SELECT * FROM locked_and_malformed_database_is_full")
    assert sqlite_code(caught.value) == 1  # SQLITE_ERROR
    assert not is_locked(caught.value)
    assert not is_damaged(caught.value)
    assert not is_storage_full(caught.value)


def test_a_file_that_is_not_a_database_is_damaged(module: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not SQLite" * 512)
    conn = module.connect(str(path))
    with pytest.raises(module.DatabaseError) as caught:
        conn.execute("SELECT * FROM sqlite_master")
    assert is_damaged(caught.value)


def test_a_unique_index_refusing_a_row_is_a_constraint(module: ModuleType) -> None:
    conn = module.connect(":memory:")
    conn.execute("CREATE TABLE t (a UNIQUE)")
    conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(module.IntegrityError) as caught:
        conn.execute("INSERT INTO t VALUES (1)")
    assert is_constraint(caught.value)
    assert sqlite_code(ValueError("no SQLite here")) is None
