"""sqlite-vec tables.

The canonical vectors are rows of ``card_embeddings``. A vec0 index per (model, dimension) is derived
from them and can be dropped and rebuilt at any time, like a cache; Alembic never manages vec0 tables or
their shadow tables, so autogenerate and the drift guard skip them through ``include_name``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping

import sqlalchemy as sa

_SHADOW_SUFFIX = re.compile(r"_(chunks|info|rowids|auxiliary|vector_chunks\d+|metadatachunks\d+|metadatatext\d+)$")


def vec_table_names(conn: sa.Connection) -> set[str]:
    """Names of every vec0 virtual table and of the shadow tables sqlite-vec made for them."""
    rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
    virtual = {
        name
        for name, sql in rows
        if sql and re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+vec0\b", sql, re.I | re.S)
    }
    shadows = {
        name
        for name, _sql in rows
        for table in virtual
        if name.startswith(f"{table}_") and _SHADOW_SUFFIX.fullmatch(name[len(table) :])
    }
    return virtual | shadows


def make_include_name(conn: sa.Connection) -> Callable[[str | None, str, Mapping[str, str | None]], bool]:
    """An Alembic ``include_name`` filter that hides vec0 tables and their shadow tables."""
    excluded = vec_table_names(conn)

    def include_name(name: str | None, type_: str, _parent_names: Mapping[str, str | None]) -> bool:
        return not (type_ == "table" and name in excluded)

    return include_name


def card_index_table(model_id: str, dim: int) -> str:
    """The vec0 table name for one embedding space (stable across runs: crc32, not ``hash()``)."""
    return f"vec_cards_{dim}_{zlib.crc32(model_id.encode('utf-8')):08x}"


def ensure_card_index(conn: sa.Connection, model_id: str, dim: int) -> str:
    if not 1 <= dim <= 8192:
        raise ValueError(f"embedding dimension out of range: {dim}")
    table = card_index_table(model_id, dim)
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
        f"card_id text primary key, embedding float[{dim}] distance_metric=cosine)"
    )
    return table
