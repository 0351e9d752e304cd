"""Card search with SQLite FTS5 (trigram tokenizer: substrings of any script), kept in sync by triggers.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

``card_search`` holds each card's title, summary, tags and category under the card's rowid. Triggers on
``knowledge_cards`` and ``card_tags`` keep it current, whoever writes. SQLite only: another database
(the planned PostgreSQL backend) gets its own full-text index in its own revision branch.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TAGS = (
    "(SELECT coalesce(group_concat(t.name, ' '), '') FROM card_tags AS ct JOIN tags AS t ON t.id = ct.tag_id "
    "WHERE ct.card_id = {card})"
)
CATEGORY = "(SELECT coalesce(c.name, '') FROM categories AS c WHERE c.id = {category})"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("CREATE VIRTUAL TABLE card_search USING fts5(title, summary, tags, category, tokenize = 'trigram')")
    op.execute(
        "INSERT INTO card_search (rowid, title, summary, tags, category) "
        f"SELECT kc.rowid, kc.title, kc.summary, {TAGS.format(card='kc.id')}, {CATEGORY.format(category='kc.category_id')} "
        "FROM knowledge_cards AS kc"
    )
    op.execute(
        "CREATE TRIGGER card_search_insert AFTER INSERT ON knowledge_cards BEGIN "
        "INSERT INTO card_search (rowid, title, summary, tags, category) VALUES "
        f"(NEW.rowid, NEW.title, NEW.summary, {TAGS.format(card='NEW.id')}, {CATEGORY.format(category='NEW.category_id')}); "
        "END"
    )
    op.execute(
        "CREATE TRIGGER card_search_update AFTER UPDATE OF title, summary, category_id ON knowledge_cards BEGIN "
        "UPDATE card_search SET title = NEW.title, summary = NEW.summary, "
        f"category = {CATEGORY.format(category='NEW.category_id')} WHERE rowid = NEW.rowid; "
        "END"
    )
    op.execute(
        "CREATE TRIGGER card_search_delete AFTER DELETE ON knowledge_cards BEGIN "
        "DELETE FROM card_search WHERE rowid = OLD.rowid; END"
    )
    for event, row in (("INSERT", "NEW"), ("DELETE", "OLD")):
        op.execute(
            f"CREATE TRIGGER card_search_tags_{event.lower()} AFTER {event} ON card_tags BEGIN "
            f"UPDATE card_search SET tags = {TAGS.format(card=f'{row}.card_id')} "
            f"WHERE rowid = (SELECT rowid FROM knowledge_cards WHERE id = {row}.card_id); "
            "END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for trigger in ("insert", "update", "delete", "tags_insert", "tags_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS card_search_{trigger}")
    op.execute("DROP TABLE IF EXISTS card_search")
