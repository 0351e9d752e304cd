"""One backend per database (``base.LibraryBackend``): ``sqlite`` for a file in the data folder, ``postgres`` for
a database on a server."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # (the command line checks a URL before it needs SQLAlchemy)
    import sqlalchemy as sa

    from san_desktop.db.backends.base import IncludeName

# The URL of a library on a server: a PostgreSQL connection URI (libpq's two schemes, and SQLAlchemy's naming
# the driver). Anything else is no library SAN can open; no URL at all is the SQLite file in the data folder.
SERVER_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")
EXAMPLE_URL = "postgresql://user@host/san"


def check_url(url: str) -> None:
    """Raise ``ValueError`` (a sentence to show) unless ``url`` names a database a backend opens
    (``core.settings.check_database_url`` checks the rest of its form)."""
    if urlsplit(url).scheme not in SERVER_SCHEMES:
        raise ValueError(f"give a PostgreSQL URL such as {EXAMPLE_URL} (empty: the SQLite file in the data folder)")


def library_url(data_dir: Path) -> str:
    """The URL of the library's database on a server ($SAN_DATABASE_URL, else ``database.url``), or "" for the
    SQLite file in ``data_dir``; ``ValueError`` when it names no database a backend opens."""
    from san_desktop.core.settings import database_url

    url = database_url(data_dir)
    if url:
        check_url(url)
    return url


def partial_index(name: str, *columns: str, where: sa.TextClause, unique: bool = False) -> sa.Index:
    """An index of the rows matching ``where`` alone, on each database (each names the option its own way)."""
    import sqlalchemy as sa

    return sa.Index(name, *columns, unique=unique, sqlite_where=where, postgresql_where=where)


def schema_of(conn: sa.Connection) -> ModuleType:
    """The ``schema`` module of the backend of ``conn``'s database: a connection no backend owns (a migration's,
    a backup's) is known by its dialect."""
    if conn.dialect.name == "sqlite":
        from san_desktop.db.backends.sqlite import schema
    else:
        from san_desktop.db.backends.postgres import schema  # type: ignore[no-redef]
    return schema


def derived_table_names(conn: sa.Connection) -> set[str]:
    """The tables a database holds beside those its migrations describe (word indexes, vector indexes), derived
    from the others and made again at will."""
    names: set[str] = schema_of(conn).derived_table_names(conn)
    return names


def make_include_name(conn: sa.Connection) -> IncludeName:
    """An Alembic ``include_name`` filter that hides the derived tables and indexes from autogenerate and the drift
    guard."""
    schema = schema_of(conn)
    excluded = schema.derived_table_names(conn)
    indexes = schema.DERIVED_INDEXES

    def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
        if type_ == "index":
            return name not in indexes
        return not (type_ == "table" and name in excluded)

    return include_name
