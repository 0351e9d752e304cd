from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_vec
from alembic import command

from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.backends.postgres.server import make_server_engine
from san_desktop.db.backends.postgres.server import read_revision as server_revision
from san_desktop.db.backends.sqlite.engine import choose_driver, make_engine
from san_desktop.db.backends.sqlite.migrate import read_revision
from san_desktop.db.database import Database, open_database, open_server_database
from san_desktop.db.migrate import alembic_config


def stdlib_loads_sqlite_vec() -> bool:
    """Whether this Python's own sqlite3 module really loads sqlite-vec (tried, not inferred from an
    attribute): the fact the driver choice must follow, found independently of the app's probe."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        return str(conn.execute("SELECT vec_version()").fetchone()[0]).startswith("v")
    except (AttributeError, sqlite3.OperationalError):
        return False
    finally:
        conn.close()


def migrate_to(path: Path, revision: str) -> None:
    """Bring a database file to an exact (older) revision, as an earlier release would have left it."""
    engine = make_engine(path, choose_driver())
    try:
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()


@contextmanager
def raw_connection(path: Path) -> Iterator[Any]:
    """A plain DB-API connection with the app's driver, committed and closed on exit."""
    conn = choose_driver().module.connect(str(path))
    try:
        yield conn
        conn.commit()
    finally:
        conn.close()


def open_again(db: Database) -> Database:
    """Another handle on ``db``'s library with an engine of its own, as another process of the same machine
    opens it (the command line beside a window): the same file, or the same server database."""
    if db.path is not None:
        return open_database(db.file)
    return open_server_database(db.engine.url.render_as_string(hide_password=False), db.data_dir)


def library_revision(data_dir: Path) -> str | None:
    """The schema revision of the library a data folder opens: its SQLite file, or $SAN_DATABASE_URL's."""
    url = os.environ.get(DATABASE_URL_ENV)
    if not url:
        return read_revision(database_path(data_dir), choose_driver())
    engine = make_server_engine(url)
    try:
        with engine.connect() as conn:
            return server_revision(conn)[0]
    finally:
        engine.dispose()
