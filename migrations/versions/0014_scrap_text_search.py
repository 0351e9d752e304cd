"""Search reaches a scrap's whole text: a word index of every scrap's text, kept in sync by triggers.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02

``scrap_search`` is an FTS5 index over ``scraps.content`` with the scraps table as its content (nothing is
stored twice: only the index). Words, not trigrams: a scrap's text is long, and a trigram index of it
would be several times its size; a Korean word is found with its particle (격리 in 격리는) because every
word is matched as a prefix. SQLite only, like the card search of revision 0007.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE VIRTUAL TABLE scrap_search USING fts5(content, content = 'scraps', content_rowid = 'rowid', "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    op.execute("INSERT INTO scrap_search (scrap_search) VALUES ('rebuild')")
    op.execute(
        "CREATE TRIGGER scrap_search_insert AFTER INSERT ON scraps BEGIN "
        "INSERT INTO scrap_search (rowid, content) VALUES (NEW.rowid, NEW.content); END"
    )
    op.execute(
        "CREATE TRIGGER scrap_search_update AFTER UPDATE OF content ON scraps BEGIN "
        "INSERT INTO scrap_search (scrap_search, rowid, content) VALUES ('delete', OLD.rowid, OLD.content); "
        "INSERT INTO scrap_search (rowid, content) VALUES (NEW.rowid, NEW.content); END"
    )
    op.execute(
        "CREATE TRIGGER scrap_search_delete AFTER DELETE ON scraps BEGIN "
        "INSERT INTO scrap_search (scrap_search, rowid, content) VALUES ('delete', OLD.rowid, OLD.content); END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for trigger in ("insert", "update", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS scrap_search_{trigger}")
    op.execute("DROP TABLE IF EXISTS scrap_search")
