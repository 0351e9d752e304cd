"""sqlite-vec tables.

The canonical vectors are rows of ``card_embeddings``. A vec0 index per (model, dimension) is derived
from them and can be dropped and rebuilt at any time, like a cache; Alembic never manages vec0 tables or
their shadow tables, so autogenerate and the drift guard skip them through ``include_name``.
"""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
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
    """A sign-quantised (1 bit per dimension) vec0 index of one embedding space.

    The PyPI sqlite-vec wheel has no SIMD, so a float scan is ~10x slower than numpy; a Hamming scan over
    bit vectors is cheap and small (64 bytes for 512 dimensions), and its candidates are re-scored
    exactly with the float vectors of ``card_embeddings``.
    """
    if dim % 8 or not 8 <= dim <= 8192:
        raise ValueError(f"embedding dimension must be a multiple of 8 up to 8192, not {dim}")
    table = card_index_table(model_id, dim)
    conn.exec_driver_sql(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(card_id text primary key, embedding bit[{dim}])"
    )
    return table


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def db_blob_rows(ids: list[str], vectors: npt.NDArray[np.float32]) -> list[tuple[str, bytes]]:
    """(id, float32 blob) pairs for bulk inserts."""
    return [(item, to_blob(vector)) for item, vector in zip(ids, vectors, strict=True)]


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype="<f4")


def index_card_vector(conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32]) -> None:
    """Put a card's vector in its space's bit index, replacing an earlier one."""
    table = ensure_card_index(conn, model_id, int(vector.shape[0]))
    conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))
    conn.exec_driver_sql(
        f"INSERT INTO {table} (card_id, embedding) VALUES (?, vec_quantize_binary(?))", (card_id, to_blob(vector))
    )


def unindex_card(conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
    table = card_index_table(model_id, dim)
    if conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).first():
        conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))


@dataclass
class _BitMatrix:
    generation: tuple[int, int]
    ids: list[str]
    words: npt.NDArray[np.uint64] | npt.NDArray[np.uint8]  # one row of packed sign bits per card


_bit_cache: dict[tuple[str, str, int], _BitMatrix] = {}  # (database, model, dimension)
_bit_cache_lock = threading.Lock()


def _generation(conn: sa.Connection, model_id: str) -> tuple[int, int]:
    """Changes whenever a vector of this space is added or removed (re-embedding deletes and inserts),
    by this process or another: (count, newest rowid) of the space's rows, read from an index."""
    count, newest = conn.exec_driver_sql(
        "SELECT count(*), coalesce(max(rowid), 0) FROM card_embeddings WHERE model_id = ?", (model_id,)
    ).one()
    return int(count), int(newest)


def _as_words(packed: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64] | npt.NDArray[np.uint8]:
    """64-bit words when the row width allows (8x fewer operations), bytes otherwise."""
    return packed.view(np.uint64) if packed.shape[-1] % 8 == 0 else packed


def _quantize(conn: sa.Connection, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.uint64] | npt.NDArray[np.uint8]:
    blob = conn.exec_driver_sql("SELECT vec_quantize_binary(?)", (to_blob(vector),)).scalar_one()
    return _as_words(np.frombuffer(bytes(blob), dtype=np.uint8))


def _bit_matrix(conn: sa.Connection, model_id: str, dim: int) -> _BitMatrix | None:
    table = card_index_table(model_id, dim)
    if not conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).first():
        return None
    generation = _generation(conn, model_id)
    key = (str(conn.engine.url), model_id, dim)
    with _bit_cache_lock:
        cached = _bit_cache.get(key)
    if cached is not None and cached.generation == generation:
        return cached
    rows = conn.exec_driver_sql(f"SELECT card_id, embedding FROM {table}").all()
    width = dim // 8
    packed = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype=np.uint8)
    matrix = _BitMatrix(generation, [row[0] for row in rows], _as_words(packed.reshape(len(rows), width)))
    with _bit_cache_lock:
        _bit_cache[key] = matrix
    return matrix


def warm_up(conn: sa.Connection, model_id: str) -> int:
    """Load the bits of every space of ``model_id`` into memory ahead of the first query (start-up, off
    the GUI thread). Returns how many vectors were loaded."""
    dims = [
        row[0]
        for row in conn.exec_driver_sql("SELECT DISTINCT dim FROM card_embeddings WHERE model_id = ?", (model_id,))
    ]
    loaded = 0
    for dim in dims:
        if dim % 8 == 0 and (matrix := _bit_matrix(conn, model_id, int(dim))) is not None:
            loaded += len(matrix.ids)
    return loaded


def hamming_candidates(conn: sa.Connection, model_id: str, vector: npt.NDArray[np.float32], limit: int) -> list[str]:
    """Ids of the ``limit`` cards whose sign bits are nearest to ``vector``'s (same space only).

    The bits persist in the vec0 table; the scan runs in numpy over a copy kept in memory (64 bytes a
    card for 512 dimensions), because the PyPI sqlite-vec build has no SIMD and scans ~20x slower.
    The copy is reloaded when the space changed, in this process or another.
    """
    matrix = _bit_matrix(conn, model_id, int(vector.shape[0]))
    if matrix is None or not matrix.ids:
        return []
    query = _quantize(conn, vector)
    distances = np.bitwise_count(matrix.words ^ query).sum(axis=1, dtype=np.uint32)
    if limit < len(distances):
        nearest = np.argpartition(distances, limit)[:limit]
        nearest = nearest[np.argsort(distances[nearest], kind="stable")]
    else:
        nearest = np.argsort(distances, kind="stable")
    return [matrix.ids[i] for i in nearest]
