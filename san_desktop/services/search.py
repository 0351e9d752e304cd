"""Search: the words of a card (title, summary, tags, category), the words of its scrap's whole text, and
its meaning (the query's vector against the cards' vectors), each ranked, then fused by reciprocal rank
(Cormack et al. 2009: each list gives 1 / (60 + rank)), every result saying where it matched. TIL notes
are searched the same way, by their words (``til_search``, revision 0015) and meaning, as results of
their own (a day, not a card).

Words come from FTS5 indexes (``card_search``, trigrams, revisions 0007 and 0009; ``scrap_search``, words
matched as prefixes, revision 0014); on PostgreSQL from the tables and indexes of revision 0020, found the
same way (``_server_*``). Meaning needs a model that embeds a query as cards are embedded (the
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
from san_desktop.db.vectors import from_stored, nearest
from san_desktop.services.til_index import til_vectors

SEARCH_CANDIDATES = 1000  # a search ranks at most this many of its newest matches
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


# a two-letter word starting more distinct trigrams than this is common: a substring scan finds enough
# matches in the newest cards sooner than an index query of that many terms
TWO_LETTER_TERMS = 200


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _trigrams_starting(conn: sa.Connection, word: str) -> list[str]:
    """The index's trigrams that start with the two-letter ``word``: every occurrence of it starts one,
    as each indexed value ends with a space (revision 0009). A range of ``card_search_vocab``."""
    key = word.lower()
    rows = conn.exec_driver_sql(
        "SELECT term FROM card_search_vocab WHERE term >= ? AND term < ? LIMIT ?",
        (key, key + "\U0010ffff", TWO_LETTER_TERMS + 1),
    )
    return [row[0] for row in rows]


def card_word_matches(
    session: Session, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
) -> list[str]:
    """Ids of live cards matching every word of ``search`` in title, summary, tags or category, best
    first: FTS5 (trigram) ranked by bm25 with the title weighted most. A two-letter word (a two-syllable
    Korean word) matches through the trigrams it starts; a one-letter or very common two-letter word is
    matched as a substring of the same index's text. Without ``scrap_ids`` only the newest
    ``SEARCH_CANDIDATES`` matches are ranked, so a word in every card stays fast."""
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        return _server_card_word_matches(conn, search, limit=limit, scrap_ids=scrap_ids)
    matches: list[str] = []
    short_words: list[str] = []
    for word in search.split():
        if len(word) >= 3:
            matches.append(_quoted(word))
            continue
        terms = _trigrams_starting(conn, word) if len(word) == 2 else []
        if len(word) == 2 and not terms:
            return []  # in no card
        if 0 < len(terms) <= TWO_LETTER_TERMS:
            matches.append("(" + " OR ".join(_quoted(term) for term in terms) + ")")
        else:
            short_words.append(word)
    where = []
    params: list[object] = []
    if matches:
        where.append("card_search MATCH ?")
        params.append(" AND ".join(matches))
    # substring words alone scan the index's own content table (FTS5's documented ``<name>_content``,
    # columns c0..c3): a plain table scan, without the virtual table's work per row
    columns = ("title", "summary", "tags", "category") if matches else ("c0", "c1", "c2", "c3")
    for word in short_words:
        pattern = _like_pattern(word)
        where.append("(" + " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in columns) + ")")
        params.extend([pattern] * len(columns))
    if matches:
        candidates = (
            "SELECT rowid, bm25(card_search, 10.0, 1.0, 3.0, 2.0) AS rank FROM card_search "
            f"WHERE {' AND '.join(where)} ORDER BY rowid DESC LIMIT ?"
        )
    else:
        candidates = (
            f"SELECT id AS rowid, 0.0 AS rank FROM card_search_content WHERE {' AND '.join(where)} "
            "ORDER BY id DESC LIMIT ?"
        )
    params.append(SEARCH_CANDIDATES if scrap_ids is None else -1)
    live = ["s.deleted_at IS NULL"]
    if scrap_ids is not None:
        live.append(f"kc.scrap_id IN ({', '.join('?' for _ in scrap_ids)})")
        params.extend(scrap_ids)
    rows = conn.exec_driver_sql(
        f"SELECT kc.id FROM ({candidates}) AS found JOIN knowledge_cards AS kc ON kc.rowid = found.rowid "
        f"JOIN scraps AS s ON s.id = kc.scrap_id WHERE {' AND '.join(live)} "
        "ORDER BY found.rank, kc.rowid DESC LIMIT ?",
        (*params, limit),
    )
    return [row[0] for row in rows]


def _like_pattern(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# what a word found in each of a card's fields adds to its rank: the weights of SQLite's bm25 (title first)
SERVER_FIELD_WEIGHTS = (("title", 10), ("tags", 3), ("category", 2), ("summary", 1))


def _server_card_word_matches(
    conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None
) -> list[str]:
    """``card_word_matches`` on PostgreSQL: every word found anywhere in a card's four fields (pg_trgm's
    index serves words of three letters or more; shorter ones are found by the same condition, scanning),
    ranked by the weights of the fields it is found in, among the newest ``SEARCH_CANDIDATES`` matches."""
    words = search.split()
    if not words:
        return []
    params: dict[str, object] = {f"w{index}": _like_pattern(word) for index, word in enumerate(words)}
    found = " AND ".join(f"cs.document ILIKE :w{index} ESCAPE '\\'" for index in range(len(words)))
    rank = " + ".join(
        f"(CASE WHEN cs.{field} ILIKE :w{index} ESCAPE '\\' THEN {weight} ELSE 0 END)"
        for index in range(len(words))
        for field, weight in SERVER_FIELD_WEIGHTS
    )
    params["candidates"] = SEARCH_CANDIDATES if scrap_ids is None else None
    params["limit"] = limit
    return _live_card_ids(
        conn,
        f"SELECT kc.id FROM (SELECT cs.card_id, {rank} AS rank FROM card_search AS cs WHERE {found} "
        "ORDER BY cs.card_id DESC LIMIT :candidates) AS found "
        "JOIN knowledge_cards AS kc ON kc.id = found.card_id JOIN scraps AS s ON s.id = kc.scrap_id "
        "WHERE {live} ORDER BY found.rank DESC, kc.id DESC LIMIT :limit",
        params,
        scrap_ids,
        "kc.scrap_id",
    )


def _live_card_ids(
    conn: sa.Connection, sql: str, params: dict[str, object], scrap_ids: Collection[str] | None, scraps_column: str
) -> list[str]:
    """The card ids a server's search ``sql`` finds, its ``{live}`` the condition of a live scrap (one of
    ``scrap_ids`` when given, by ``scraps_column``)."""
    live = "s.deleted_at IS NULL"
    binds: list[sa.BindParameter[object]] = []
    if scrap_ids is not None:
        live += f" AND {scraps_column} IN :scraps"
        params = {**params, "scraps": tuple(scrap_ids)}
        binds = [sa.bindparam("scraps", expanding=True)]
    rows = conn.execute(sa.text(sql.replace("{live}", live)).bindparams(*binds), params)
    return [row[0] for row in rows]


def _server_prefix_query(search: str) -> str | None:
    """``_prefix_query`` as PostgreSQL's ``to_tsquery`` takes it: every word as a quoted prefix."""
    words = [word for word in search.split() if len(word) >= 2]
    if not words:
        return None
    return " & ".join("'" + word.replace("\\", "\\\\").replace("'", "''") + "':*" for word in words)


def _prefix_query(search: str) -> str | None:
    """Every word of ``search`` as a prefix (a Korean word with its particle, a word with its plural)."""
    words = [word for word in search.split() if len(word) >= 2]
    if not words:
        return None
    return " AND ".join(_quoted(word) + "*" for word in words)


def text_word_matches(
    session: Session, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
) -> list[str]:
    """Ids of live cards whose scrap's text has every word of ``search`` (as a word's start), best first
    (bm25), among the newest ``SEARCH_CANDIDATES`` matches."""
    if session.connection().dialect.name != "sqlite":
        return _server_text_word_matches(session.connection(), search, limit=limit, scrap_ids=scrap_ids)
    query = _prefix_query(search)
    if query is None:
        return []
    params: list[object] = [query, SEARCH_CANDIDATES if scrap_ids is None else -1]
    live = ["s.deleted_at IS NULL"]
    if scrap_ids is not None:
        live.append(f"s.id IN ({', '.join('?' for _ in scrap_ids)})")
        params.extend(scrap_ids)
    rows = session.connection().exec_driver_sql(
        "SELECT kc.id FROM (SELECT rowid, bm25(scrap_search) AS rank FROM scrap_search WHERE scrap_search MATCH ? "
        "ORDER BY rowid DESC LIMIT ?) AS found JOIN scraps AS s ON s.rowid = found.rowid "
        f"JOIN knowledge_cards AS kc ON kc.scrap_id = s.id WHERE {' AND '.join(live)} "
        "ORDER BY found.rank, s.rowid DESC LIMIT ?",
        (*params, limit),
    )
    return [row[0] for row in rows]


def _server_text_word_matches(
    conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None
) -> list[str]:
    """``text_word_matches`` on PostgreSQL, through the index of the scraps' words (revision 0020)."""
    query = _server_prefix_query(search)
    if query is None:
        return []
    params: dict[str, object] = {
        "query": query,
        "candidates": SEARCH_CANDIDATES if scrap_ids is None else None,
        "limit": limit,
    }
    return _live_card_ids(
        conn,
        "SELECT kc.id FROM (SELECT s.id, ts_rank(to_tsvector('simple', s.content), q) AS rank "
        "FROM scraps AS s, to_tsquery('simple', :query) AS q "
        "WHERE to_tsvector('simple', s.content) @@ q ORDER BY s.id DESC LIMIT :candidates) AS found "
        "JOIN scraps AS s ON s.id = found.id JOIN knowledge_cards AS kc ON kc.scrap_id = s.id "
        "WHERE {live} ORDER BY found.rank DESC, s.id DESC LIMIT :limit",
        params,
        scrap_ids,
        "s.id",
    )


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
        marks = ", ".join("?" for _ in scrap_ids)
        rows = conn.exec_driver_sql(
            "SELECT kc.id, ce.dim, ce.vector FROM knowledge_cards AS kc JOIN card_embeddings AS ce "
            f"ON ce.card_id = kc.id WHERE kc.scrap_id IN ({marks}) AND ce.model_id = ?",
            (*scrap_ids, query.model_id),
        )
        scored = [(card_id, float(from_stored(vector, dim) @ query.vector)) for card_id, dim, vector in rows]
        scored.sort(key=lambda item: -item[1])
    close = [card_id for card_id, similarity in scored if similarity >= floor]
    live = live_in_space(conn, close, query.model_id)
    return [card_id for card_id in close if card_id in live][:limit]


def live_in_space(conn: sa.Connection, card_ids: Sequence[str], model_id: str) -> set[str]:
    """Those of ``card_ids`` still live and still in ``model_id``'s space (the in-memory index may predate a
    deletion or a re-embedding). Driven by the candidates' primary keys (CROSS JOIN fixes the join order):
    a plan that starts from the scraps table would read every row."""
    if not card_ids:
        return set()
    marks = ", ".join("?" for _ in card_ids)
    join = "CROSS JOIN" if conn.dialect.name == "sqlite" else "JOIN"  # (PostgreSQL plans this order by itself)
    rows = conn.exec_driver_sql(
        f"SELECT kc.id FROM knowledge_cards AS kc {join} scraps AS s ON s.id = kc.scrap_id "
        f"{join} card_embeddings AS ce ON ce.card_id = kc.id "
        f"WHERE kc.id IN ({marks}) AND s.deleted_at IS NULL AND ce.model_id = ?",
        (*card_ids, model_id),
    )
    return {row[0] for row in rows}


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
    """Ids of days whose current TIL text has every word of ``search`` (as a word's start), best first
    (bm25, the title weighted over the text)."""
    conn = session.connection()
    if conn.dialect.name != "sqlite":
        server_query = _server_prefix_query(search)
        if server_query is None:
            return []
        return list(
            conn.execute(
                sa.text(
                    "SELECT ts.summary_id FROM til_search AS ts JOIN daily_summaries AS ds ON ds.id = ts.summary_id "
                    "WHERE ts.words @@ to_tsquery('simple', :query) AND ds.current_version = ts.version "
                    # weights {D, C, B, A}: the body (D) counts a fifth of the title (A), as bm25's 1 and 5 do
                    "ORDER BY ts_rank('{0.2, 0, 0, 1}', ts.words, to_tsquery('simple', :query)) DESC, "
                    "ds.local_date DESC LIMIT :limit"
                ),
                {"query": server_query, "limit": limit},
            ).scalars()
        )
    query = _prefix_query(search)
    if query is None:
        return []
    rows = conn.exec_driver_sql(
        "SELECT ts.summary_id FROM til_search AS ts JOIN daily_summaries AS ds ON ds.id = ts.summary_id "
        "WHERE til_search MATCH ? AND ds.current_version = ts.version "
        "ORDER BY bm25(til_search, 0.0, 0.0, 5.0, 1.0), ds.local_date DESC LIMIT ?",
        (query, limit),
    )
    return [row[0] for row in rows]


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
