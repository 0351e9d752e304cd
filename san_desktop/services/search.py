"""Search: the words of a card (title, summary, tags, category), the words of its scrap's whole text, and
its meaning (the query's vector against the cards' vectors), each ranked, then fused by reciprocal rank
(Cormack et al. 2009: each list gives 1 / (60 + rank)), every result saying where it matched. TIL notes
are searched the same way, by their words and meaning, as results of their own (a day, not a card).

Words are found by the library's database in its own word indexes (``LibrarySearch``: FTS5 on SQLite, the
indexes of revision 0020 on PostgreSQL). Meaning needs a model that embeds a query as cards are embedded (the
shipped sentence encoder): its nearest cards above the model's search floor (``ai.calibration``) join
in, so "트랜잭션 격리" finds an English card on isolation levels. Without one, words alone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.calibration import search_floor_of
from san_desktop.db.backends.base import backend_of
from san_desktop.db.vectors import from_stored, nearest
from san_desktop.services.til_index import til_vectors

MEANING_CANDIDATES = 30  # the query's nearest cards that may join the results
RRF_K = 60
# where a result matched, as people are told
IN_CARD, IN_TEXT, BY_MEANING, IN_TIL = "card", "text", "meaning", "til"
WHERE_SAID = {
    IN_CARD: "title, summary or tags",
    IN_TEXT: "the scrap's text",
    BY_MEANING: "meaning",
    IN_TIL: "the TIL's text",
}


@dataclass(frozen=True)
class QueryVector:
    model_id: str
    vector: npt.NDArray[np.float32]


QueryEmbedder = Callable[[str], "QueryVector | None"]


def card_word_matches(
    session: Session, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
) -> list[str]:
    """Ids of live cards matching every word of ``search`` in title, summary, tags or category, best
    first (``LibrarySearch.card_word_matches``)."""
    conn = session.connection()
    return backend_of(conn).search.card_word_matches(conn, search, limit=limit, scrap_ids=scrap_ids)


def text_word_matches(
    session: Session, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
) -> list[str]:
    """Ids of live cards whose scrap's text has every word of ``search`` (as a word's start), best first."""
    conn = session.connection()
    return backend_of(conn).search.text_word_matches(conn, search, limit=limit, scrap_ids=scrap_ids)


def meaning_matches(
    session: Session, query: QueryVector, *, limit: int, scrap_ids: Collection[str] | None = None
) -> list[str]:
    """Ids of live cards nearest to the query in its model's space, above the model's search floor."""
    floor = search_floor_of(query.model_id)
    if floor is None:
        return []
    conn = session.connection()
    if scrap_ids is None:
        scored = nearest(conn, query.model_id, query.vector, MEANING_CANDIDATES)
    else:
        rows = conn.execute(
            sa.text(
                "SELECT kc.id, ce.dim, ce.vector FROM knowledge_cards AS kc JOIN card_embeddings AS ce "
                "ON ce.card_id = kc.id WHERE kc.scrap_id IN :scraps AND ce.model_id = :model"
            ).bindparams(sa.bindparam("scraps", expanding=True)),
            {"scraps": tuple(scrap_ids), "model": query.model_id},
        )
        scored = [(card_id, float(from_stored(vector, dim) @ query.vector)) for card_id, dim, vector in rows]
        scored.sort(key=lambda item: -item[1])
    close = [card_id for card_id, similarity in scored if similarity >= floor]
    live = live_in_space(conn, close, query.model_id)
    return [card_id for card_id in close if card_id in live][:limit]


def live_in_space(conn: sa.Connection, card_ids: Sequence[str], model_id: str) -> set[str]:
    """Those of ``card_ids`` still live and still in ``model_id``'s space (the in-memory index may predate a
    deletion or a re-embedding)."""
    return backend_of(conn).search.live_in_space(conn, card_ids, model_id)


@dataclass(frozen=True)
class Hit:
    card_id: str
    matched: tuple[str, ...]  # IN_CARD, IN_TEXT, BY_MEANING: where it matched, in that order


@dataclass(frozen=True)
class TilHit:
    summary_id: str
    matched: tuple[str, ...]  # IN_TIL, BY_MEANING


def fuse(ranked: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[Hit]:
    """Reciprocal rank fusion of ranked lists of ids (of cards, or of days), each named by where it matched."""
    scores: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    for where, ids in ranked:
        for rank, card_id in enumerate(ids):
            scores[card_id] = scores.get(card_id, 0.0) + 1.0 / (RRF_K + rank + 1)
            matched.setdefault(card_id, []).append(where)
    order = sorted(scores, key=lambda card_id: -scores[card_id])[:limit]
    return [Hit(card_id, tuple(matched[card_id])) for card_id in order]


def search_cards(
    session: Session,
    search: str,
    query: QueryVector | None,
    *,
    limit: int,
    scrap_ids: Collection[str] | None = None,
) -> list[Hit]:
    """The cards ``search`` finds by their words, their scrap's words and (with ``query``) meaning."""
    depth = max(limit, 50)
    ranked: list[tuple[str, Sequence[str]]] = [
        (IN_CARD, card_word_matches(session, search, limit=depth, scrap_ids=scrap_ids)),
        (IN_TEXT, text_word_matches(session, search, limit=depth, scrap_ids=scrap_ids)),
    ]
    if query is not None:
        ranked.append((BY_MEANING, meaning_matches(session, query, limit=depth, scrap_ids=scrap_ids)))
    return fuse(ranked, limit)


def til_word_matches(session: Session, search: str, *, limit: int) -> list[str]:
    """Ids of days whose current TIL text has every word of ``search`` (as a word's start), best first (the
    title weighted over the text)."""
    conn = session.connection()
    return backend_of(conn).search.til_word_matches(conn, search, limit=limit)


def til_meaning_matches(session: Session, query: QueryVector, *, limit: int) -> list[str]:
    """Ids of days whose TIL is nearest to the query in its model's space, above the model's search floor
    (a day a year: few enough to compare with each)."""
    floor = search_floor_of(query.model_id)
    if floor is None:
        return []
    scored = [
        (summary_id, float(vector @ query.vector))
        for summary_id, _day, vector in til_vectors(session, query.model_id)
        if vector.shape == query.vector.shape
    ]
    scored.sort(key=lambda item: -item[1])
    return [summary_id for summary_id, similarity in scored[:limit] if similarity >= floor]


def search_tils(session: Session, search: str, query: QueryVector | None, *, limit: int) -> list[TilHit]:
    """The days whose TIL ``search`` finds by its words and (with ``query``) meaning, best first."""
    ranked: list[tuple[str, Sequence[str]]] = [(IN_TIL, til_word_matches(session, search, limit=limit))]
    if query is not None:
        ranked.append((BY_MEANING, til_meaning_matches(session, query, limit=limit)))
    return [TilHit(hit.card_id, hit.matched) for hit in fuse(ranked, limit)]
