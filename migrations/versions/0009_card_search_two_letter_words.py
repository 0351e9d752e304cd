"""Card search finds two-letter words (a two-syllable Korean word) through the index, not a scan.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30

A trigram index has no entry for two characters, so "저장" was looked for by a LIKE scan of every card
(60 ms at 100,000 cards). Every occurrence of a two-letter word is the start of some trigram once each
indexed column ends with a space; ``card_search_vocab`` (fts5vocab) lists the index's trigrams, so the
trigrams that start with the word are a range of it, and the search matches any of them. The content is
rebuilt with the trailing space and the triggers of revision 0007 (0008 for card_tags) remade to add it.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TAGS = (
    "(SELECT coalesce(group_concat(t.name, ' '), '') FROM card_tags AS ct JOIN tags AS t ON t.id = ct.tag_id "
    "WHERE ct.card_id = {card})"
)
CATEGORY = "(SELECT coalesce(c.name, '') FROM categories AS c WHERE c.id = {category})"
TRIGGERS = ("insert", "update", "delete", "tags_insert", "tags_delete")


def _make_triggers(end: str) -> None:
    """The search index's triggers; ``end`` is appended to every indexed value."""
    tags = TAGS + end
    category = CATEGORY + end
    op.execute(
        "CREATE TRIGGER card_search_insert AFTER INSERT ON knowledge_cards BEGIN "
        "INSERT INTO card_search (rowid, title, summary, tags, category) VALUES "
        f"(NEW.rowid, NEW.title{end}, NEW.summary{end}, {tags.format(card='NEW.id')}, "
        f"{category.format(category='NEW.category_id')}); "
        "END"
    )
    op.execute(
        "CREATE TRIGGER card_search_update AFTER UPDATE OF title, summary, category_id ON knowledge_cards BEGIN "
        f"UPDATE card_search SET title = NEW.title{end}, summary = NEW.summary{end}, "
        f"category = {category.format(category='NEW.category_id')} WHERE rowid = NEW.rowid; "
        "END"
    )
    op.execute(
        "CREATE TRIGGER card_search_delete AFTER DELETE ON knowledge_cards BEGIN "
        "DELETE FROM card_search WHERE rowid = OLD.rowid; END"
    )
    for event, row in (("INSERT", "NEW"), ("DELETE", "OLD")):
        op.execute(
            f"CREATE TRIGGER card_search_tags_{event.lower()} AFTER {event} ON card_tags BEGIN "
            f"UPDATE card_search SET tags = {tags.format(card=f'{row}.card_id')} "
            f"WHERE rowid = (SELECT rowid FROM knowledge_cards WHERE id = {row}.card_id); "
            "END"
        )


def _rebuild(end: str) -> None:
    for trigger in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS card_search_{trigger}")
    op.execute("DELETE FROM card_search")
    op.execute(
        "INSERT INTO card_search (rowid, title, summary, tags, category) "
        f"SELECT kc.rowid, kc.title{end}, kc.summary{end}, {TAGS.format(card='kc.id')}{end}, "
        f"{CATEGORY.format(category='kc.category_id')}{end} FROM knowledge_cards AS kc"
    )
    _make_triggers(end)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _rebuild(" || ' '")
    op.execute("CREATE VIRTUAL TABLE card_search_vocab USING fts5vocab(card_search, 'row')")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TABLE IF EXISTS card_search_vocab")
    _rebuild("")
