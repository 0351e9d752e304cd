"""One backend per database (``base.LibraryBackend``): ``sqlite`` for a file in the data folder, ``postgres`` for
a database on a server."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa

    from san_desktop.db.backends.base import IncludeName


def _schema(conn: sa.Connection) -> ModuleType:
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
    names: set[str] = _schema(conn).derived_table_names(conn)
    return names


def make_include_name(conn: sa.Connection) -> IncludeName:
    """An Alembic ``include_name`` filter that hides the derived tables and indexes from autogenerate and the drift
    guard."""
    schema = _schema(conn)
    excluded = schema.derived_table_names(conn)
    indexes = schema.DERIVED_INDEXES

    def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
        if type_ == "index":
            return name not in indexes
        return not (type_ == "table" and name in excluded)

    return include_name
