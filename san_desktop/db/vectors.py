"""sqlite-vec tables.

The canonical vectors are rows of ``card_embeddings``. A vec0 index per (model, dimension) is derived
from them and can be dropped and rebuilt at any time, like a cache; Alembic never manages vec0 tables or
their shadow tables, so autogenerate and the drift guard skip them through ``include_name``.
"""

from __future__ import annotations

import functools
import re
import threading
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

_SHADOW_SUFFIX = re.compile(
    r"_(chunks|info|rowids|auxiliary|vector_chunks\d+|metadatachunks\d+|metadatatext\d+|data|idx|content|docsize|config)$"
)


def vec_table_names(conn: sa.Connection) -> set[str]:
    """Names of every virtual table (sqlite-vec's vec0, FTS5) and of the shadow tables made for them:
    SQLite-only derived indexes that Alembic's models do not describe."""
    rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
    virtual = {
        name
        for name, sql in rows
        if sql and re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+(vec0|fts5)\b", sql, re.I | re.S)
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


SIMHASH_BITS = 512
_PROJECTION_SEED = 20_261_130
# candidates taken from the bit scan, then ranked by the 8-bit codes; the best few are scored exactly
SCAN_CANDIDATES = 500


@functools.cache
def _projection(dim: int) -> npt.NDArray[np.float32]:
    """A fixed random Gaussian projection per dimension: the same in every process and every release."""
    return np.random.default_rng(_PROJECTION_SEED + dim).standard_normal((dim, SIMHASH_BITS)).astype(np.float32)


def simhash(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """SimHash bits (signs of a random projection), packed: near in angle means few differing bits, for
    sparse vectors too (the signs of the raw dimensions of a sparse vector are mostly those of zeros)."""
    return np.packbits((vectors @ _projection(int(vectors.shape[1]))) > 0, axis=1)


def card_index_table(model_id: str, dim: int) -> str:
    """The vec0 table of one embedding space (stable across runs: crc32, not ``hash()``)."""
    return f"vec_simhash_{dim}_{zlib.crc32(model_id.encode('utf-8')):08x}"


def ensure_card_index(conn: sa.Connection, model_id: str, dim: int) -> str:
    """The persisted SimHash bits (``bit[512]``) of one embedding space: a derived index that can be
    dropped and rebuilt from ``card_embeddings`` at any time."""
    if not 1 <= dim <= 65_536:
        raise ValueError(f"embedding dimension out of range: {dim}")
    table = card_index_table(model_id, dim)
    columns = f"card_id text primary key, embedding bit[{SIMHASH_BITS}]"
    conn.exec_driver_sql(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0({columns})")
    return table


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def db_blob_rows(ids: list[str], vectors: npt.NDArray[np.float32]) -> list[tuple[str, bytes]]:
    """(id, float32 blob) pairs for bulk inserts."""
    return [(item, to_blob(vector)) for item, vector in zip(ids, vectors, strict=True)]


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype="<f4")


def index_card_vector(conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32]) -> None:
    """Put a card's SimHash bits in its space's vec0 index, replacing earlier ones."""
    table = ensure_card_index(conn, model_id, int(vector.shape[0]))
    bits = simhash(np.asarray(vector, dtype=np.float32)[None, :])[0].tobytes()
    conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))
    conn.exec_driver_sql(f"INSERT INTO {table} (card_id, embedding) VALUES (?, vec_bit(?))", (card_id, bits))


def unindex_card(conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
    table = card_index_table(model_id, dim)
    if conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).first():
        conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))


@dataclass
class _SpaceIndex:
    """One embedding space in memory: SimHash bits (64 bytes a card) for the scan and 8-bit codes with a
    scale per card (``dim`` bytes) to rank the candidates; ids as fixed-width bytes. About 61 MB for
    100,000 cards of 512 dimensions."""

    generation: tuple[int, int]  # (count, newest rowid) of the space's rows when loaded
    ids: npt.NDArray[np.bytes_]
    bits: npt.NDArray[np.uint64]
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]


_indexes: dict[tuple[str, str, int], _SpaceIndex] = {}  # (database, model, dimension)
_indexes_lock = threading.Lock()


def _newest_rowid(conn: sa.Connection, model_id: str) -> int:
    """Grows whenever a vector of this model is added (re-embedding deletes and inserts, so it grows
    then too), by this process or another; one step down the model_id index."""
    return int(
        conn.exec_driver_sql(
            "SELECT coalesce(max(rowid), 0) FROM card_embeddings WHERE model_id = ?", (model_id,)
        ).scalar_one()
    )


def _count(conn: sa.Connection, model_id: str) -> int:
    return int(
        conn.exec_driver_sql("SELECT count(*) FROM card_embeddings WHERE model_id = ?", (model_id,)).scalar_one()
    )


def _encode(rows: Sequence[Any], dim: int) -> tuple[Any, Any, Any, Any]:
    ids = np.array([row[0].encode("ascii") for row in rows], dtype="S36")
    matrix = (
        np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype="<f4").reshape(len(rows), dim)
        if rows
        else np.zeros((0, dim), dtype=np.float32)
    )
    scales = np.abs(matrix).max(axis=1) if len(rows) else np.zeros(0, dtype=np.float32)
    safe = np.where(scales == 0, 1.0, scales).astype(np.float32)
    codes = np.round(matrix / safe[:, None] * 127).astype(np.int8)
    bits = simhash(matrix).view(np.uint64) if len(rows) else np.zeros((0, SIMHASH_BITS // 64), dtype=np.uint64)
    return ids, bits, codes, (safe / 127).astype(np.float32)


def _space_index(conn: sa.Connection, model_id: str, dim: int) -> _SpaceIndex:
    newest = _newest_rowid(conn, model_id)
    key = (str(conn.engine.url), model_id, dim)
    with _indexes_lock:
        cached = _indexes.get(key)
    if cached is not None and cached.generation[1] == newest:
        return cached  # (rows only removed since: they drop out when the shown cards are read)
    generation = (_count(conn, model_id), newest)
    query = "SELECT card_id, vector FROM card_embeddings WHERE model_id = ? AND dim = ?"
    if cached is not None and generation[0] > cached.generation[0]:
        added = conn.exec_driver_sql(query + " AND rowid > ?", (model_id, dim, cached.generation[1])).all()
        if cached.generation[0] + len(added) == generation[0]:  # only additions since: append them
            ids, bits, codes, scales = _encode(added, dim)
            index = _SpaceIndex(
                generation,
                np.concatenate([cached.ids, ids]),
                np.concatenate([cached.bits, bits]),
                np.concatenate([cached.codes, codes]),
                np.concatenate([cached.scales, scales]),
            )
            with _indexes_lock:
                _indexes[key] = index
            return index
    ids, bits, codes, scales = _encode(conn.exec_driver_sql(query, (model_id, dim)).all(), dim)
    index = _SpaceIndex(generation, ids, bits, codes, scales)
    with _indexes_lock:
        _indexes[key] = index
    return index


def warm_up(conn: sa.Connection, model_id: str) -> int:
    """Load every space of ``model_id`` into memory ahead of the first query (start-up, off the GUI
    thread). Returns how many vectors were loaded."""
    dims = [
        row[0]
        for row in conn.exec_driver_sql("SELECT DISTINCT dim FROM card_embeddings WHERE model_id = ?", (model_id,))
    ]
    return sum(len(_space_index(conn, model_id, int(dim)).ids) for dim in dims)


def candidates(
    conn: sa.Connection, model_id: str, vector: npt.NDArray[np.float32], limit: int, exclude: Collection[str] = ()
) -> list[str]:
    """Ids of the ``limit`` cards nearest to ``vector`` in its space, best first, as the 8-bit codes rank
    the ``SCAN_CANDIDATES`` whose SimHash bits differ least (the caller scores the few it shows exactly)."""
    index = _space_index(conn, model_id, int(vector.shape[0]))
    if not len(index.ids):
        return []
    query = np.asarray(vector, dtype=np.float32)
    distances = np.bitwise_count(index.bits ^ simhash(query[None, :]).view(np.uint64)[0]).sum(axis=1, dtype=np.uint32)
    wanted = min(len(distances), SCAN_CANDIDATES + len(exclude))
    pool = np.argpartition(distances, wanted - 1)[:wanted] if wanted < len(distances) else np.arange(len(distances))
    approximate = (index.codes[pool].astype(np.float32) * index.scales[pool][:, None]) @ query
    ranked = pool[np.argsort(-approximate, kind="stable")]
    skip = {item.encode("ascii") for item in exclude}
    found: list[str] = []
    for position in ranked:
        card_id = index.ids[position]
        if card_id not in skip:
            found.append(card_id.decode("ascii"))
            if len(found) == limit:
                break
    return found
