"""The similar-card index finds what an exact scan finds, on real text (a correctness test, not a timing):
recall@10 of the SimHash scan + 8-bit ranking against exact cosine over the original float vectors."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from san_desktop.ai.encoder import embedding_model as local_embedding_model
from san_desktop.ai.local import LocalProvider
from san_desktop.core.ids import new_id
from san_desktop.db.database import Database
from san_desktop.db.vectors import candidates, to_stored
from tests.support.real_text import card_texts

# the in-memory index's recall, over vectors written straight into a SQLite file (a server's library with
# pgvector answers through its HNSW index: bench/bench_postgres.py measures that one's recall)
pytestmark = pytest.mark.sqlite


def _index(db: Database, vectors: npt.NDArray[np.float32]) -> list[str]:
    """Store ``vectors`` as the app stores card vectors; returns their card ids."""
    ids = [new_id() for _ in range(len(vectors))]
    raw = db.engine.raw_connection()  # the index reads card_embeddings alone: no cards needed behind them
    try:
        raw.execute("PRAGMA foreign_keys=OFF")
        raw.execute("BEGIN")
        raw.executemany(
            "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)",
            [
                (card_id, local_embedding_model(), vectors.shape[1], to_stored(vector), "2026-11-30 00:00:00")
                for card_id, vector in zip(ids, vectors, strict=True)
            ],
        )
        raw.execute("COMMIT")
    finally:
        raw.execute("PRAGMA foreign_keys=ON")  # the connection goes back to the pool as it came
        raw.close()
    return ids


def test_recall_at_10_on_real_text_is_at_least_95_percent(db: Database) -> None:
    texts = card_texts(3000)  # a few thousand cards of real prose, not a toy vocabulary
    vectors = LocalProvider().embed(texts).astype(np.float32)
    ids = _index(db, vectors)
    queries = np.random.default_rng(7).choice(len(ids), 150, replace=False)
    recall = 0.0
    with db.engine.connect() as conn:
        for q in queries:
            scores = vectors @ vectors[q]
            scores[q] = -np.inf
            exact = {ids[i] for i in np.argsort(-scores)[:10]}
            found = candidates(conn, local_embedding_model(), vectors[q], 10, exclude={ids[q]})
            assert ids[q] not in found
            recall += len(exact & set(found)) / 10
    assert recall / len(queries) >= 0.95, recall / len(queries)


def test_recall_at_10_for_texts_held_out_of_the_index_is_at_least_95_percent(db: Database) -> None:
    vectors = LocalProvider().embed(card_texts(3100)).astype(np.float32)
    indexed, held_out = vectors[:3000], vectors[3000:]  # a new card asks about the cards there are
    ids = _index(db, indexed)
    recall = 0.0
    with db.engine.connect() as conn:
        for query in held_out:
            exact = {ids[i] for i in np.argsort(-(indexed @ query))[:10]}
            recall += len(exact & set(candidates(conn, local_embedding_model(), query, 10))) / 10
    assert recall / len(held_out) >= 0.95, recall / len(held_out)
