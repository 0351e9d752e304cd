"""Full-text search in a library on PostgreSQL: the tables and indexes of revision 0020 (``card_search`` with a
pg_trgm index of a card's four fields, the 'simple' ``to_tsvector`` index of the scraps' text, ``til_search``),
ranked as SQLite's bm25 ranks them: a card's title first, a TIL's title over its text."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import sqlalchemy as sa

from san_desktop.db.backends.base import SEARCH_CANDIDATES, like_pattern

# what a word found in each of a card's fields adds to its rank: the weights of SQLite's bm25 (title first)
FIELD_WEIGHTS = (("title", 10), ("tags", 3), ("category", 2), ("summary", 1))


def _prefix_query(search: str) -> str | None:
    """Every word of ``search`` (two letters or more) as a quoted prefix, as ``to_tsquery`` takes it."""
    words = [word for word in search.split() if len(word) >= 2]
    if not words:
        return None
    return " & ".join("'" + word.replace("\\", "\\\\").replace("'", "''") + "':*" for word in words)


def _live_card_ids(
    conn: sa.Connection, sql: str, params: dict[str, object], scrap_ids: Collection[str] | None, scraps_column: str
) -> list[str]:
    """The card ids ``sql`` finds, its ``{live}`` the condition of a live scrap (one of ``scrap_ids`` when given,
    by ``scraps_column``)."""
    live = "s.deleted_at IS NULL"
    binds: list[sa.BindParameter[object]] = []
    if scrap_ids is not None:
        live += f" AND {scraps_column} IN :scraps"
        params = {**params, "scraps": tuple(scrap_ids)}
        binds = [sa.bindparam("scraps", expanding=True)]
    rows = conn.execute(sa.text(sql.replace("{live}", live)).bindparams(*binds), params)
    return [row[0] for row in rows]


class PostgresSearch:
    """``LibrarySearch`` on PostgreSQL's word indexes."""

    def card_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """Every word found anywhere in a card's four fields (pg_trgm's index serves words of three letters or
        more; shorter ones are found by the same condition, scanning), ranked by the weights of the fields it
        is found in."""
        words = search.split()
        if not words:
            return []
        params: dict[str, object] = {f"w{index}": like_pattern(word) for index, word in enumerate(words)}
        found = " AND ".join(f"cs.document ILIKE :w{index} ESCAPE '\\'" for index in range(len(words)))
        rank = " + ".join(
            f"(CASE WHEN cs.{field} ILIKE :w{index} ESCAPE '\\' THEN {weight} ELSE 0 END)"
            for index in range(len(words))
            for field, weight in FIELD_WEIGHTS
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

    def text_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """Through the index of the scraps' words, ranked by ``ts_rank``."""
        query = _prefix_query(search)
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

    def til_word_matches(self, conn: sa.Connection, search: str, *, limit: int) -> list[str]:
        query = _prefix_query(search)
        if query is None:
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
                {"query": query, "limit": limit},
            ).scalars()
        )

    def live_in_space(self, conn: sa.Connection, card_ids: Sequence[str], model_id: str) -> set[str]:
        """Driven by the candidates' primary keys (PostgreSQL plans that order by itself)."""
        if not card_ids:
            return set()
        rows = conn.execute(
            sa.text(
                "SELECT kc.id FROM knowledge_cards AS kc JOIN scraps AS s ON s.id = kc.scrap_id "
                "JOIN card_embeddings AS ce ON ce.card_id = kc.id "
                "WHERE kc.id IN :cards AND s.deleted_at IS NULL AND ce.model_id = :model"
            ).bindparams(sa.bindparam("cards", expanding=True)),
            {"cards": tuple(card_ids), "model": model_id},
        )
        return {row[0] for row in rows}
