"""Similar cards on a PostgreSQL server with pgvector: a table of the cards' vectors per embedding space, with
an HNSW index, derived from ``card_embeddings`` (made, and filled from it, when first needed; like SQLite's
vec0 tables it can be dropped and made again). Scores are inner products of the very 8-bit vectors
``card_embeddings`` keeps, as the in-memory index scores them (``db.vectors``), so a card's similar cards
score the same on either. A server without pgvector uses the in-memory index."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Collection
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:  # numpy loads with the first vector, not when the library opens (the window's start)
    import numpy as np
    import numpy.typing as npt

TABLE_PREFIX = "card_vectors_"
FILL_BATCH = 2_000
_lock = threading.Lock()
_installed: dict[str, bool] = {}  # database url -> pgvector installed there
_ready: set[tuple[str, str]] = set()  # (database url, table) made or found by this process


def table_of(model_id: str, dim: int) -> str:
    return f"{TABLE_PREFIX}{dim}_{zlib.crc32(model_id.encode('utf-8')):08x}"


def available(conn: sa.Connection) -> bool:
    """Whether the library's database has pgvector installed (asked once per process and database)."""
    url = str(conn.engine.url)
    with _lock:
        known = _installed.get(url)
    if known is None:
        known = conn.execute(sa.text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first() is not None
        with _lock:
            _installed[url] = known
    return known


def install(engine: sa.Engine) -> bool:
    """Install pgvector where the server has it and the user may (on opening the library); False otherwise,
    and similar cards use the in-memory index."""
    try:
        with engine.begin() as conn:
            if conn.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first() is None:
                return False
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
    except sa.exc.DBAPIError:
        return False  # not allowed to (a database owner may not create it on every server)
    return True


def literal(vector: npt.NDArray[np.float32]) -> str:
    return "[" + ",".join(f"{value:.8g}" for value in vector.astype("float32", copy=False)) + "]"


def ensure(conn: sa.Connection, model_id: str, dim: int) -> str:
    """The space's table, made and filled from ``card_embeddings`` the first time, in a transaction of its own
    (committed whatever the caller's does; machines making it at once take turns on a lock of its name). No
    foreign key: making one would wait for the caller's own open writes to the cards. A deleted card's row
    stays until the card is indexed again; readers keep only live cards (``services.search.live_in_space``)."""
    from san_desktop.db.vectors import from_stored

    table = table_of(model_id, dim)
    key = (str(conn.engine.url), table)
    with _lock:
        if key in _ready:
            return table
    with conn.engine.begin() as own:
        # (pg_class read by a query, in this statement's snapshot: ``to_regclass`` answers from the backend's
        # catalog cache, which an advisory lock does not refresh, so a table another machine made while this one
        # waited for the lock was not seen, and making it again failed the card's job)
        exists = sa.text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relname = :table "
            "AND relnamespace = current_schema()::regnamespace)"
        )
        if not own.execute(exists, {"table": table}).scalar_one():
            own.execute(sa.text("SELECT pg_advisory_xact_lock(hashtextextended(:table, 0))"), {"table": table})
        if not own.execute(exists, {"table": table}).scalar_one():
            own.execute(
                sa.text(
                    f"CREATE TABLE {table} (card_id varchar(36) PRIMARY KEY, embedding vector({int(dim)}) NOT NULL)"
                )
            )
            rows = own.execute(
                sa.text("SELECT card_id, vector FROM card_embeddings WHERE model_id = :model AND dim = :dim"),
                {"model": model_id, "dim": dim},
            ).all()
            for start in range(0, len(rows), FILL_BATCH):
                own.execute(
                    sa.text(f"INSERT INTO {table} (card_id, embedding) VALUES (:card, CAST(:vector AS vector))"),
                    [
                        {"card": card_id, "vector": literal(from_stored(bytes(blob), dim))}
                        for card_id, blob in rows[start : start + FILL_BATCH]
                    ],
                )
            # (built after the rows: an HNSW index built over them is quicker than one grown row by row)
            own.execute(sa.text(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_ip_ops)"))
    with _lock:
        _ready.add(key)
    return table


def put(conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32]) -> None:
    """The card's vector in its space's table, as ``card_embeddings`` keeps it (8-bit), replacing any."""
    from san_desktop.db.vectors import from_stored, to_stored

    dim = int(vector.shape[0])
    table = ensure(conn, model_id, dim)
    conn.execute(
        sa.text(
            f"INSERT INTO {table} (card_id, embedding) VALUES (:card, CAST(:vector AS vector)) "
            "ON CONFLICT (card_id) DO UPDATE SET embedding = excluded.embedding"
        ),
        {"card": card_id, "vector": literal(from_stored(to_stored(vector), dim))},
    )


def remove(conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
    table = table_of(model_id, dim)
    if conn.execute(sa.text("SELECT to_regclass(:table)"), {"table": table}).scalar_one() is not None:
        conn.execute(sa.text(f"DELETE FROM {table} WHERE card_id = :card"), {"card": card_id})


def nearest(
    conn: sa.Connection, model_id: str, vector: npt.NDArray[np.float32], limit: int, exclude: Collection[str] = ()
) -> list[tuple[str, float]]:
    """(id, similarity) of the ``limit`` cards nearest to ``vector`` in its space, best first, by the HNSW
    index (searching a candidate list of at least 200, or four times what is asked)."""
    table = ensure(conn, model_id, int(vector.shape[0]))
    wanted = limit + len(exclude)
    conn.execute(sa.text("SELECT set_config('hnsw.ef_search', :value, true)"), {"value": str(max(200, 4 * wanted))})
    rows = conn.execute(
        sa.text(
            f"SELECT card_id, -(embedding <#> CAST(:query AS vector)) AS score FROM {table} "
            "ORDER BY embedding <#> CAST(:query AS vector) LIMIT :wanted"
        ),
        {"query": literal(vector), "wanted": wanted},
    ).all()
    skip = set(exclude)
    return [(str(card_id), float(score)) for card_id, score in rows if card_id not in skip][:limit]


class PostgresVectors:
    """``LibraryVectors`` in pgvector's tables, where the server has pgvector; the in-memory index otherwise."""

    # the time a row was written: the machines' clocks agree with the server's (``server.ServerClock``)
    added_order = "created_at"

    def index_card(
        self, conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32], *, new: bool
    ) -> None:
        if available(conn):
            put(conn, card_id, model_id, vector)

    def unindex_card(self, conn: sa.Connection, card_id: str, model_id: str, dim: int) -> None:
        if available(conn):
            remove(conn, card_id, model_id, dim)

    def nearest(
        self,
        conn: sa.Connection,
        model_id: str,
        vector: npt.NDArray[np.float32],
        limit: int,
        exclude: Collection[str] = (),
    ) -> list[tuple[str, float]] | None:
        return nearest(conn, model_id, vector, limit, exclude) if available(conn) else None

    def warm_up(self, conn: sa.Connection, model_id: str) -> int | None:
        """Each space's table made (filled from ``card_embeddings`` the first time)."""
        if not available(conn):
            return None
        spaces = conn.execute(
            sa.text("SELECT DISTINCT dim FROM card_embeddings WHERE model_id = :model"), {"model": model_id}
        ).scalars()
        tables = [ensure(conn, model_id, int(dim)) for dim in list(spaces)]
        return sum(int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()) for table in tables)
