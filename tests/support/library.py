"""A library's whole content, table by table, for "as before" comparisons (an undone import, a restored backup)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from san_desktop.db.database import Database

# what a process writes about itself, not the library: a window's notices, its session, the migrations
BOOKKEEPING = frozenset({"change_notices", "app_sessions", "alembic_version"})


def library_tables(conn: sa.Connection) -> list[str]:
    """Every table of the library's content: virtual tables (search indexes, vector indexes) are read through
    themselves, not through the shadow tables they keep their pages in."""
    rows = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).all()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _sql in rows
        if name not in BOOKKEEPING and not any(name.startswith(f"{parent}_") for parent in virtual)
    ]


def snapshot(db: Database, *, leave_out: frozenset[str] = frozenset()) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, sorted."""
    with db.engine.connect() as conn:
        return {
            table: sorted((tuple(row) for row in conn.exec_driver_sql(f'SELECT * FROM "{table}"')), key=repr)
            for table in library_tables(conn)
            if table not in leave_out
        }
