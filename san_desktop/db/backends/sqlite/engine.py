"""The one SQLAlchemy engine: SQLite driver choice (``db.backends.sqlite.driver``), sqlite-vec, pragmas and explicit
transactions.

Many Python builds (pyenv's included) ship ``sqlite3`` without ``enable_load_extension``; then the
``sqlean`` module (package ``sqlean-py``, a drop-in DB-API module) is used instead.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from san_desktop.core.errors import SqliteDriverError
from san_desktop.db.backends.sqlite.driver import DRIVER_ENV as DRIVER_ENV
from san_desktop.db.backends.sqlite.driver import DRIVERS as DRIVERS
from san_desktop.db.backends.sqlite.driver import SqliteDriver as SqliteDriver
from san_desktop.db.backends.sqlite.driver import can_load_extensions as can_load_extensions
from san_desktop.db.backends.sqlite.driver import choose_driver as choose_driver
from san_desktop.db.backends.sqlite.driver import stdlib_loads_extensions as stdlib_loads_extensions

# Pragmas set on every connection. 32 MB of page cache: with the 2 MB default, vec0 inserts re-read their
# index's pages from the file again and again. No automatic checkpoint: it would run inside whichever commit
# crossed its threshold, a worker's or a person's; the backend's writer thread checkpoints between its batches
# (``db.backends.group_writer``), and SQLite when the last connection to the file closes.
PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA cache_size=-32768",
    "PRAGMA wal_autocheckpoint=0",
)
BUSY_TIMEOUT_MS = 30_000
SCHEMA_CHECK = "SELECT 1 FROM sqlite_master WHERE 0"


@functools.cache
def vec0_path() -> str:
    """The sqlite-vec loadable extension shipped in the ``sqlite_vec`` package, found without importing
    that package (its ``__init__`` imports numpy, a sixth of a command line call's start-up)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise SqliteDriverError("The sqlite-vec package is missing. Reinstall SAN Desktop with its dependencies.")
    return os.path.join(next(iter(spec.submodule_search_locations)), "vec0")


def load_sqlite_vec(dbapi_conn: Any) -> None:
    dbapi_conn.enable_load_extension(True)
    try:
        dbapi_conn.load_extension(vec0_path())
    finally:
        dbapi_conn.enable_load_extension(False)


def _configure_connection(dbapi_conn: Any, busy_timeout_ms: int) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite's implicit transactions would
    # otherwise start late and make BEGIN IMMEDIATE impossible).
    dbapi_conn.isolation_level = None
    load_sqlite_vec(dbapi_conn)
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        for pragma in PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()


def make_engine(
    path: Path, driver: SqliteDriver, *, echo: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS
) -> sa.Engine:
    """An engine for the SQLite file ``path`` with sqlite-vec loaded on every connection.

    Transactions begin with ``BEGIN`` by default; pass ``execution_options(sqlite_begin="IMMEDIATE")``
    on a connection to take the write lock up front (serialised creation, claims).
    """
    engine = sa.create_engine(
        f"sqlite+pysqlite:///{path}",
        module=driver.module,
        connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False},
        echo=echo,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        _configure_connection(dbapi_conn, busy_timeout_ms)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())
        # A table made by another connection since this one's last statement (a new vector index, made by
        # a job) makes SQLite fail the first statement after it if that is a DELETE whose foreign keys
        # cascade into a table with a trigger on a full-text index: "no such table: tags". A statement that
        # reads the schema table first makes SQLite take up the new schema (BEGIN alone does not).
        driver_connection: Any = conn.connection.driver_connection  # (open: BEGIN just ran on it)
        driver_connection.execute(SCHEMA_CHECK).close()  # (cheap: a cached statement that reads nothing)

    return engine


def vec_version(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return str(conn.exec_driver_sql("SELECT vec_version()").scalar_one())
