"""Card vectors in a SQLite library: a sqlite-vec ``vec0`` table per (model, dimension) holding each card's
SimHash bits, derived from ``card_embeddings`` and dropped and rebuilt at any time, like a cache (Alembic never
manages it: ``schema.derived_table_names``). Nearest cards are found by the in-memory index (``db.vectors``),
which reads ``card_embeddings`` in the order of its rowids."""

from __future__ import annotations

import zlib
from collections.abc import Collection
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # numpy loads with the first vector, not when the library opens (the window's start)
    import numpy as np
    import numpy.typing as npt


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
    if key not in _ensured:
        from san_desktop.db.vectors import SIMHASH_BITS

        columns = f"card_id text primary key, embedding bit[{SIMHASH_BITS}]"
        conn.exec_driver_sql(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0({columns})")
        _ensured.add(key)
    return table


class SqliteVectors:
    """``LibraryVectors`` in vec0 tables."""

    added_order = "rowid"

    def index_card(
        self, conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32], *, new: bool
    ) -> None:
        """The card's SimHash bits in its space's vec0 table, replacing earlier ones (none when ``new``)."""
        import numpy as np

        from san_desktop.db.vectors import simhash

        bits = simhash(np.asarray(vector, dtype=np.float32)[None, :])[0].tobytes()
        dim = int(vector.shape[0])
        for last_try in (False, True):
            table = ensure_card_index(conn, model_id, dim)
            try:
                if not new:
                    conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))
                conn.exec_driver_sql(
                    f"INSERT INTO {table} (card_id, embedding) VALUES (?, vec_bit(?))", (card_id, bits)
                )
                return
            except sa.exc.OperationalError as exc:
                if last_try or "no such table" not in str(exc.orig):
                    raise
                _ensured.discard((str(conn.engine.url), table))  # dropped since (to be rebuilt): make it again

    def unindex_card(self, conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
        table = card_index_table(model_id, dim)
        if conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).first():
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE card_id = ?", (card_id,))

    def nearest(
        self,
        conn: sa.Connection,
        model_id: str,
        vector: npt.NDArray[np.float32],
        limit: int,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]] | None:
        return None  # the in-memory index answers (``db.vectors.nearest``)

    def warm_up(self, conn: sa.Connection, model_id: str) -> int | None:
        return None
