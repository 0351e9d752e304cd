"""Card vectors: the canonical rows of ``card_embeddings``, the in-memory index that similar cards are found
with, and (SQLite) sqlite-vec tables.

A vec0 index per (model, dimension) is derived from the rows and can be dropped and rebuilt at any time, like
a cache; Alembic never manages vec0 tables or their shadow tables, so autogenerate and the drift guard skip
them through ``include_name``. A library on PostgreSQL has no vec0 tables; the in-memory index serves it
the same way.
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

from san_desktop.db.backends.postgres import vectors as server_vectors

_SHADOW_SUFFIX = re.compile(
    r"_(chunks|info|rowids|auxiliary|vector_chunks\d+|metadatachunks\d+|metadatatext\d+|data|idx|content|docsize|config)$"
)


def vec_table_names(conn: sa.Connection) -> set[str]:
    """Names of every virtual table (sqlite-vec's vec0, FTS5 and its vocabulary) and of the shadow tables
    made for them: SQLite-only derived indexes that Alembic's models do not describe (none elsewhere)."""
    if conn.dialect.name != "sqlite":
        return set()
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


# PostgreSQL's word indexes (revision 0020): tables and indexes the migrations keep and the models do not describe
SERVER_DERIVED_TABLES = frozenset({"card_search", "til_search"})
SERVER_DERIVED_INDEXES = frozenset({"ix_scraps_content_words"})


def derived_table_names(conn: sa.Connection) -> set[str]:
    """The derived tables of the database: SQLite's virtual tables (``vec_table_names``), PostgreSQL's word
    indexes."""
    if conn.dialect.name == "sqlite":
        return vec_table_names(conn)
    spaces = conn.execute(
        sa.text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE :prefix"),
        {"prefix": server_vectors.TABLE_PREFIX + "%"},
    ).scalars()
    return set(SERVER_DERIVED_TABLES) | set(spaces)


def make_include_name(conn: sa.Connection) -> Callable[[str | None, str, Mapping[str, str | None]], bool]:
    """An Alembic ``include_name`` filter that hides derived tables (vec0 and FTS5 tables with their shadow
    tables; PostgreSQL's word indexes)."""
    excluded = derived_table_names(conn)

    def include_name(name: str | None, type_: str, _parent_names: Mapping[str, str | None]) -> bool:
        if type_ == "index":
            return name not in SERVER_DERIVED_INDEXES
        return not (type_ == "table" and name in excluded)

    return include_name


SIMHASH_BITS = 512
_PROJECTION_SEED = 20_261_130
# candidates taken from the bit scan, then ranked on the 8-bit codes (the stored vectors themselves)
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


_ensured: set[tuple[str, str]] = set()  # (database, table) made or found by this process


def ensure_card_index(conn: sa.Connection, model_id: str, dim: int) -> str:
    """The persisted SimHash bits (``bit[512]``) of one embedding space: a derived index that can be
    dropped and rebuilt from ``card_embeddings`` at any time. Made once per process and database (the
    statement, run for every card, cost as much as the insert)."""
    if not 1 <= dim <= 65_536:
        raise ValueError(f"embedding dimension out of range: {dim}")
    table = card_index_table(model_id, dim)
    key = (str(conn.engine.url), table)
    if key not in _ensured and conn.dialect.name == "sqlite":
        columns = f"card_id text primary key, embedding bit[{SIMHASH_BITS}]"
        conn.exec_driver_sql(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0({columns})")
        _ensured.add(key)
    return table


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    """Plain little-endian float32 (files; ``card_embeddings`` rows written before revision 0008)."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype="<f4")


def to_stored(vector: npt.NDArray[np.float32]) -> bytes:
    """A card vector as ``card_embeddings`` keeps it: a float32 scale, then one int8 per dimension
    (``value = code * scale``). A quarter of float32's size: a 512-d row is 516 bytes, so seven share a
    4 KiB page where a 2 KiB float32 row took a page of its own. The cosine of two unit vectors moves by
    about 0.001, and the in-memory index ranks on these very codes."""
    values = np.asarray(vector, dtype=np.float32)
    peak = float(np.abs(values).max()) if values.size else 0.0
    scale = np.float32(peak / 127 if peak > 0 else 1.0)
    codes = np.clip(np.round(values / scale), -127, 127).astype(np.int8)
    return np.array([scale], dtype="<f4").tobytes() + codes.tobytes()


def stored_rows(ids: list[str], vectors: npt.NDArray[np.float32]) -> list[tuple[str, bytes]]:
    """(id, stored vector) pairs for bulk inserts."""
    return [(item, to_stored(vector)) for item, vector in zip(ids, vectors, strict=True)]


def from_stored(blob: bytes, dim: int) -> npt.NDArray[np.float32]:
    """A ``card_embeddings`` vector, 8-bit or (older rows) float32, as float32."""
    if len(blob) == dim * 4:
        return from_blob(blob)
    codes, scales = _stored_codes([blob], dim)
    decoded: npt.NDArray[np.float32] = codes[0].astype(np.float32) * scales[0]
    return decoded


def _stored_codes(blobs: Sequence[bytes], dim: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """The int8 codes (n x dim) and scales (n) of stored vectors, float32 ones encoded on the way."""
    if all(len(blob) == dim + 4 for blob in blobs):
        raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), dim + 4)
        scales = raw[:, :4].copy().view("<f4").reshape(len(blobs)).astype(np.float32)
        return raw[:, 4:].view(np.int8), scales
    stored = [blob if len(blob) == dim + 4 else to_stored(from_blob(blob)) for blob in blobs]
    return _stored_codes(stored, dim)


def index_card_vector(
    conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32], *, new: bool = False
) -> None:
    """Put a card's SimHash bits in its space's vec0 index, replacing earlier ones (none when ``new``). On a
    server with pgvector, the card's vector in its space's table (``server_vectors``)."""
    if conn.dialect.name != "sqlite":
        if server_vectors.available(conn):
            server_vectors.put(conn, card_id, model_id, vector)
        return
    bits = simhash(np.asarray(vector, dtype=np.float32)[None, :])[0].tobytes()
    dim = int(vector.shape[0])
    for last_try in (False, True):
        table = ensure_card_index(conn, model_id, dim)
        try:
            if not new:
                conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))
            conn.exec_driver_sql(f"INSERT INTO {table} (card_id, embedding) VALUES (?, vec_bit(?))", (card_id, bits))
            return
        except sa.exc.OperationalError as exc:
            if last_try or "no such table" not in str(exc.orig):
                raise
            _ensured.discard((str(conn.engine.url), table))  # dropped since (to be rebuilt): make it again


def unindex_card(conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
    if conn.dialect.name != "sqlite":
        if server_vectors.available(conn):
            server_vectors.remove(conn, card_id, model_id, dim)
        return
    table = card_index_table(model_id, dim)
    if conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).first():
        conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))


@dataclass
class _SpaceIndex:
    """One embedding space in memory: SimHash bits (64 bytes a card) for the scan and the stored 8-bit
    codes with a scale per card (``dim`` bytes) to rank the candidates; ids as fixed-width bytes. About 61 MB for
    100,000 cards of 512 dimensions."""

    generation: tuple[int, Any]  # (count, newest) of the space's rows when loaded (``_newest``)
    ids: npt.NDArray[np.bytes_]
    bits: npt.NDArray[np.uint64]  # (SIMHASH_BITS // 64, n): word by word, each contiguous
    codes: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]


_indexes: dict[tuple[str, str, int], _SpaceIndex] = {}  # (database, model, dimension)
_indexes_lock = threading.Lock()


def _order(conn: sa.Connection) -> str:
    """The column that grows with every vector added (re-embedding deletes and inserts, so it grows then
    too), by this process or another: SQLite's rowid; on a server, the time the row was written (the
    machines' clocks agree with the server's: ``queue.server_clock``)."""
    return "rowid" if conn.dialect.name == "sqlite" else "created_at"


def _newest(conn: sa.Connection, model_id: str) -> Any:
    """The greatest ``_order`` of the model's vectors (one step down an index on SQLite)."""
    return conn.execute(
        sa.text(f"SELECT max({_order(conn)}) FROM card_embeddings WHERE model_id = :model"), {"model": model_id}
    ).scalar_one()


def _count(conn: sa.Connection, model_id: str) -> int:
    return int(
        conn.execute(
            sa.text("SELECT count(*) FROM card_embeddings WHERE model_id = :model"), {"model": model_id}
        ).scalar_one()
    )


def _encode(rows: Sequence[Any], dim: int) -> tuple[Any, Any, Any, Any]:
    ids = np.array([row[0].encode("ascii") for row in rows], dtype="S36")
    if not rows:
        empty_bits = np.zeros((SIMHASH_BITS // 64, 0), dtype=np.uint64)
        return ids, empty_bits, np.zeros((0, dim), dtype=np.int8), np.zeros(0, dtype=np.float32)
    codes, scales = _stored_codes([bytes(row[1]) for row in rows], dim)
    bits = np.ascontiguousarray(simhash(codes.astype(np.float32) * scales[:, None]).view(np.uint64).T)
    return ids, bits, codes, scales


def _space_index(conn: sa.Connection, model_id: str, dim: int) -> _SpaceIndex:
    newest = _newest(conn, model_id)
    key = (str(conn.engine.url), model_id, dim)
    with _indexes_lock:
        cached = _indexes.get(key)
    if cached is not None and cached.generation[1] == newest:
        return cached  # (rows only removed since: they drop out when the shown cards are read)
    generation = (_count(conn, model_id), newest)
    query = "SELECT card_id, vector FROM card_embeddings WHERE model_id = :model AND dim = :dim"
    space = {"model": model_id, "dim": dim}
    if cached is not None and generation[0] > cached.generation[0] and cached.generation[1] is not None:
        added = conn.execute(
            sa.text(f"{query} AND {_order(conn)} > :after"), {**space, "after": cached.generation[1]}
        ).all()
        if cached.generation[0] + len(added) == generation[0]:  # only additions since: append them
            ids, bits, codes, scales = _encode(added, dim)
            index = _SpaceIndex(
                generation,
                np.concatenate([cached.ids, ids]),
                np.concatenate([cached.bits, bits], axis=1),
                np.concatenate([cached.codes, codes]),
                np.concatenate([cached.scales, scales]),
            )
            with _indexes_lock:
                _indexes[key] = index
            return index
    ids, bits, codes, scales = _encode(conn.execute(sa.text(query), space).all(), dim)
    index = _SpaceIndex(generation, ids, bits, codes, scales)
    with _indexes_lock:
        _indexes[key] = index
    return index


def warm_up(conn: sa.Connection, model_id: str) -> int:
    """Load every space of ``model_id`` into memory ahead of the first query (start-up, off the GUI
    thread). Returns how many vectors were loaded. On a server with pgvector, each space's table is made
    (filled from ``card_embeddings`` the first time) instead."""
    if conn.dialect.name != "sqlite" and server_vectors.available(conn):
        spaces = conn.execute(
            sa.text("SELECT DISTINCT dim FROM card_embeddings WHERE model_id = :model"), {"model": model_id}
        ).scalars()
        tables = [server_vectors.ensure(conn, model_id, int(dim)) for dim in list(spaces)]
        return sum(int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()) for table in tables)
    dims = [
        row[0]
        for row in conn.execute(
            sa.text("SELECT DISTINCT dim FROM card_embeddings WHERE model_id = :model"), {"model": model_id}
        )
    ]
    return sum(len(_space_index(conn, model_id, int(dim)).ids) for dim in dims)


def candidates(
    conn: sa.Connection, model_id: str, vector: npt.NDArray[np.float32], limit: int, exclude: Collection[str] = ()
) -> list[str]:
    """Ids of the ``limit`` cards nearest to ``vector`` in its space, best first (``nearest`` without
    the scores)."""
    return [card_id for card_id, _similarity in nearest(conn, model_id, vector, limit, exclude)]


def nearest(
    conn: sa.Connection, model_id: str, vector: npt.NDArray[np.float32], limit: int, exclude: Collection[str] = ()
) -> list[tuple[str, float]]:
    """(id, cosine similarity) of the ``limit`` cards nearest to ``vector`` in its space, best first: the
    ``SCAN_CANDIDATES`` whose SimHash bits differ least, scored on their 8-bit codes — the very vectors
    ``card_embeddings`` stores (float32 rows of older databases: within 0.001 of their cosine). On a server
    with pgvector, its HNSW index over the same vectors (``server_vectors``)."""
    if conn.dialect.name != "sqlite" and server_vectors.available(conn):
        return server_vectors.nearest(conn, model_id, vector, limit, exclude)
    index = _space_index(conn, model_id, int(vector.shape[0]))
    if not len(index.ids):
        return []
    query = np.asarray(vector, dtype=np.float32)
    # word by word over contiguous arrays: numpy streams each column once, where XOR-ing (n, 8) rows and
    # summing across them strides through memory
    distances = np.zeros(len(index.ids), dtype=np.uint16)
    for words, word in zip(index.bits, simhash(query[None, :]).view(np.uint64)[0], strict=True):
        distances += np.bitwise_count(words ^ word)
    wanted = min(len(distances), SCAN_CANDIDATES + len(exclude))
    pool = np.argpartition(distances, wanted - 1)[:wanted] if wanted < len(distances) else np.arange(len(distances))
    scores = (index.codes[pool].astype(np.float32) * index.scales[pool][:, None]) @ query
    order = np.argsort(-scores, kind="stable")
    skip = {item.encode("ascii") for item in exclude}
    found: list[tuple[str, float]] = []
    for position in order:
        card_id = index.ids[pool[position]]
        if card_id not in skip:
            found.append((card_id.decode("ascii"), float(scores[position])))
            if len(found) == limit:
                break
    return found
