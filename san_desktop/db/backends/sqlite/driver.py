"""The SQLite DB-API module SAN Desktop uses, chosen without SQLAlchemy (the entry point starts the
database's integrity check with it before the rest of the app is imported)."""

from __future__ import annotations

import importlib
import os
import sqlite3
from dataclasses import dataclass
from types import ModuleType

from san_desktop.core.errors import SqliteDriverError

DRIVER_ENV = "SAN_SQLITE_DRIVER"
DRIVERS = ("sqlite3", "sqlean")


@dataclass(frozen=True)
class SqliteDriver:
    name: str
    module: ModuleType

    @property
    def sqlite_version(self) -> str:
        return str(self.module.sqlite_version)


def can_load_extensions(module: ModuleType) -> bool:
    """Whether connections of this DB-API module can load SQLite extensions."""
    try:
        conn = module.connect(":memory:")
    except Exception:
        return False
    try:
        return callable(getattr(conn, "enable_load_extension", None))
    finally:
        conn.close()


def stdlib_loads_extensions() -> bool:
    """Whether this Python's own ``sqlite3`` can load SQLite extensions (``san doctor`` says so)."""
    return can_load_extensions(sqlite3)


def choose_driver(preference: str | None = None, *, stdlib: ModuleType = sqlite3) -> SqliteDriver:
    """Pick the SQLite module: ``preference`` (or ``$SAN_SQLITE_DRIVER``) if given, else the standard
    library's when it can load extensions, else ``sqlean``."""
    wanted = (preference or os.environ.get(DRIVER_ENV) or "auto").strip().lower()
    if wanted not in (*DRIVERS, "auto"):
        raise SqliteDriverError(f"Unknown SQLite driver {wanted!r} in {DRIVER_ENV}; use one of: auto, sqlite3, sqlean.")
    if wanted in ("auto", "sqlite3") and can_load_extensions(stdlib):
        return SqliteDriver("sqlite3", stdlib)
    if wanted == "sqlite3":
        raise SqliteDriverError(
            "This Python's sqlite3 module cannot load extensions, which sqlite-vec needs. "
            f"Unset {DRIVER_ENV} to use the bundled sqlean driver instead."
        )
    try:
        sqlean = importlib.import_module("sqlean")
    except ImportError as exc:
        raise SqliteDriverError(
            "This Python's sqlite3 module cannot load extensions and the sqlean-py package is missing. "
            "Reinstall SAN Desktop with its dependencies."
        ) from exc
    return SqliteDriver("sqlean", sqlean)
