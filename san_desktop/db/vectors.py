"""Card vectors: the canonical rows of ``card_embeddings`` (8-bit, ``to_stored``), their SimHash bits, and the
in-memory index that similar cards are found with where the database has no index of its own that answers
(``LibraryVectors.nearest``: a SQLite library, a server without pgvector). The database's own index of each
card's vector is its backend's (``db.backends``: sqlite-vec's vec0 tables, pgvector's tables), derived from the
rows and dropped and made again at will.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

from san_desktop.db.backends.base import backend_of

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
    """Put a card's vector in its database's own index, replacing an earlier one (none when ``new``)."""
    backend_of(conn).vectors.index_card(conn, card_id, model_id, vector, new=new)


def unindex_card(conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
    backend_of(conn).vectors.unindex_card(conn, card_id, model_id, dim)


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
    """The column that grows with every vector added, by this process or another (re-embedding deletes and
    inserts, so it grows then too): ``LibraryVectors.added_order``."""
    return backend_of(conn).vectors.added_order


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
    thread). Returns how many vectors were loaded. Where the database's own index answers (``nearest``), that
    index is made ready instead."""
    own = backend_of(conn).vectors.warm_up(conn, model_id)
    if own is not None:
        return own
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
    ``card_embeddings`` stores (float32 rows of older databases: within 0.001 of their cosine). Where the
    database has an index of its own that answers (pgvector's HNSW index over the same vectors), that one's."""
    own = backend_of(conn).vectors.nearest(conn, model_id, vector, limit, exclude)
    if own is not None:
        return own
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
