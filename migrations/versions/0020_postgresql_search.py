"""PostgreSQL: the word indexes that SQLite keeps in FTS5 (revisions 0007, 0009, 0014, 0015).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05

- ``card_search``: each card's title, summary, tags and category, kept in step by triggers as on SQLite
  (a card written, its tags added or removed; deleted with the card). A card's words are found anywhere in
  them, as SQLite's trigram index finds them, through a pg_trgm index of the four together: so a
  two-syllable Korean word or a part of a word is found too (``services.search``). Without pg_trgm on the
  server the search is the same, only without the index.
- A scrap's text is searched by the words it starts (a Korean word with its particle): an index of
  ``to_tsvector('simple', content)`` on ``scraps`` (the 'simple' configuration: no language's stemming, as
  FTS5's unicode61 tokenizer has none).
- ``til_search``: each day's current TIL text, written by the TIL indexing job as on SQLite, with its words
  weighted title over body.
Nothing on SQLite. These tables and indexes are derived: the models do not describe them (the drift guard
leaves them out, as it leaves out SQLite's virtual tables; ``db.backends.derived_table_names``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CARD_SEARCH_OF = """
CREATE FUNCTION card_search_of(card varchar) RETURNS void LANGUAGE sql AS $$
    INSERT INTO card_search (card_id, title, summary, tags, category)
    SELECT kc.id, kc.title, kc.summary,
        coalesce((SELECT string_agg(t.name, ' ' ORDER BY t.name) FROM card_tags AS ct
                  JOIN tags AS t ON t.id = ct.tag_id WHERE ct.card_id = kc.id), ''),
        coalesce((SELECT c.name FROM categories AS c WHERE c.id = kc.category_id), '')
    FROM knowledge_cards AS kc WHERE kc.id = card
    ON CONFLICT (card_id) DO UPDATE SET title = excluded.title, summary = excluded.summary,
        tags = excluded.tags, category = excluded.category
$$
"""
CARD_TRIGGER = """
CREATE FUNCTION card_search_card() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM card_search_of(NEW.id);
    RETURN NULL;
END $$
"""
TAGS_TRIGGER = """
CREATE FUNCTION card_search_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM card_search_of(OLD.card_id);
    ELSE
        PERFORM card_search_of(NEW.card_id);
    END IF;
    RETURN NULL;
END $$
"""


def _has_pg_trgm() -> bool:
    conn = op.get_bind()
    available = conn.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first()
    if available is None:
        return False
    conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    return True


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TABLE card_search ("
        "card_id varchar(36) PRIMARY KEY REFERENCES knowledge_cards (id) ON DELETE CASCADE, "
        "title text NOT NULL, summary text NOT NULL, tags text NOT NULL, category text NOT NULL, "
        "document text GENERATED ALWAYS AS (title || ' ' || summary || ' ' || tags || ' ' || category) STORED)"
    )
    if _has_pg_trgm():
        op.execute("CREATE INDEX ix_card_search_document ON card_search USING gin (document gin_trgm_ops)")
    op.execute(CARD_SEARCH_OF)
    op.execute(CARD_TRIGGER)
    op.execute(TAGS_TRIGGER)
    op.execute(
        "CREATE TRIGGER card_search_card AFTER INSERT OR UPDATE OF title, summary, category_id "
        "ON knowledge_cards FOR EACH ROW EXECUTE FUNCTION card_search_card()"
    )
    op.execute(
        "CREATE TRIGGER card_search_tags AFTER INSERT OR DELETE ON card_tags "
        "FOR EACH ROW EXECUTE FUNCTION card_search_tags()"
    )
    op.execute("SELECT card_search_of(id) FROM knowledge_cards")
    op.execute("CREATE INDEX ix_scraps_content_words ON scraps USING gin (to_tsvector('simple', content))")
    op.execute(
        "CREATE TABLE til_search ("
        "summary_id varchar(36) PRIMARY KEY REFERENCES daily_summaries (id) ON DELETE CASCADE, "
        "version integer NOT NULL, title text NOT NULL, body text NOT NULL, "
        "words tsvector GENERATED ALWAYS AS (setweight(to_tsvector('simple', title), 'A') || "
        "setweight(to_tsvector('simple', body), 'D')) STORED)"
    )
    op.execute("CREATE INDEX ix_til_search_words ON til_search USING gin (words)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TABLE IF EXISTS til_search")
    op.execute("DROP INDEX IF EXISTS ix_scraps_content_words")
    op.execute("DROP TRIGGER IF EXISTS card_search_tags ON card_tags")
    op.execute("DROP TRIGGER IF EXISTS card_search_card ON knowledge_cards")
    op.execute("DROP FUNCTION IF EXISTS card_search_tags()")
    op.execute("DROP FUNCTION IF EXISTS card_search_card()")
    op.execute("DROP FUNCTION IF EXISTS card_search_of(varchar)")
    op.execute("DROP TABLE IF EXISTS card_search")
