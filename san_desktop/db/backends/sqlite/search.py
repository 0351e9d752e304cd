"""Full-text search in a SQLite library: FTS5 indexes kept by triggers (``card_search``, trigrams, revisions 0007
and 0009; ``scrap_search``, words matched as prefixes, revision 0014; ``til_search``, revision 0015), ranked by
bm25."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import sqlalchemy as sa

from san_desktop.db.backends.base import SEARCH_CANDIDATES, like_pattern

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


def _prefix_query(search: str) -> str | None:
    """Every word of ``search`` as a prefix (a Korean word with its particle, a word with its plural)."""
    words = [word for word in search.split() if len(word) >= 2]
    if not words:
        return None
    return " AND ".join(_quoted(word) + "*" for word in words)


class SqliteSearch:
    """``LibrarySearch`` on FTS5."""

    def card_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """FTS5 (trigram) ranked by bm25 with the title weighted most. A two-letter word (a two-syllable Korean
        word) matches through the trigrams it starts; a one-letter or very common two-letter word is matched
        as a substring of the same index's text."""
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
            pattern = like_pattern(word)
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

    def text_word_matches(
        self, conn: sa.Connection, search: str, *, limit: int, scrap_ids: Collection[str] | None = None
    ) -> list[str]:
        """``scrap_search`` ranked by bm25."""
        query = _prefix_query(search)
        if query is None:
            return []
        params: list[object] = [query, SEARCH_CANDIDATES if scrap_ids is None else -1]
        live = ["s.deleted_at IS NULL"]
        if scrap_ids is not None:
            live.append(f"s.id IN ({', '.join('?' for _ in scrap_ids)})")
            params.extend(scrap_ids)
        rows = conn.exec_driver_sql(
            "SELECT kc.id FROM (SELECT rowid, bm25(scrap_search) AS rank FROM scrap_search WHERE scrap_search MATCH ? "
            "ORDER BY rowid DESC LIMIT ?) AS found JOIN scraps AS s ON s.rowid = found.rowid "
            f"JOIN knowledge_cards AS kc ON kc.scrap_id = s.id WHERE {' AND '.join(live)} "
            "ORDER BY found.rank, s.rowid DESC LIMIT ?",
            (*params, limit),
        )
        return [row[0] for row in rows]

    def til_word_matches(self, conn: sa.Connection, search: str, *, limit: int) -> list[str]:
        """``til_search`` ranked by bm25, the title weighted five times the text."""
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

    def live_in_space(self, conn: sa.Connection, card_ids: Sequence[str], model_id: str) -> set[str]:
        """Driven by the candidates' primary keys (CROSS JOIN fixes SQLite's join order): a plan that starts
        from the scraps table would read every row."""
        if not card_ids:
            return set()
        marks = ", ".join("?" for _ in card_ids)
        rows = conn.exec_driver_sql(
            "SELECT kc.id FROM knowledge_cards AS kc CROSS JOIN scraps AS s ON s.id = kc.scrap_id "
            "CROSS JOIN card_embeddings AS ce ON ce.card_id = kc.id "
            f"WHERE kc.id IN ({marks}) AND s.deleted_at IS NULL AND ce.model_id = ?",
            (*card_ids, model_id),
        )
        return {row[0] for row in rows}
