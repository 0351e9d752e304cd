"""What a SQLite library holds beside the tables Alembic manages: virtual tables (FTS5 word indexes, sqlite-vec's
vec0 tables of card vectors) and their shadow tables, derived from the other tables and invisible to
autogenerate and the drift guard."""

from __future__ import annotations

import re

import sqlalchemy as sa

DERIVED_INDEXES: frozenset[str] = frozenset()

_SHADOW_SUFFIX = re.compile(
    r"_(chunks|info|rowids|auxiliary|vector_chunks\d+|metadatachunks\d+|metadatatext\d+|data|idx|content|docsize|config)$"
)


def derived_table_names(conn: sa.Connection) -> set[str]:
    """Names of every virtual table (sqlite-vec's vec0, FTS5 and its vocabulary) and of the shadow tables
    made for them: derived indexes that Alembic's models do not describe."""
    rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
    virtual = {
        name
        for name, sql in rows
        if sql and re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+(vec0|fts5|fts5vocab)\b", sql, re.I | re.S)
    }
    shadows = {
        name
        for name, _sql in rows
        for table in virtual
        if name.startswith(f"{table}_") and _SHADOW_SUFFIX.fullmatch(name[len(table) :])
    }
    return virtual | shadows
