"""What a library on PostgreSQL holds beside the tables Alembic's models describe: the word indexes of revision
0020 (kept by its migrations) and pgvector's tables of card vectors (``vectors``), derived from the other tables
and invisible to autogenerate and the drift guard."""

from __future__ import annotations

import sqlalchemy as sa

from san_desktop.db.backends.postgres.vectors import TABLE_PREFIX

DERIVED_TABLES = frozenset({"card_search", "til_search"})
DERIVED_INDEXES = frozenset({"ix_scraps_content_words"})


def derived_table_names(conn: sa.Connection) -> set[str]:
    """The word index tables, and each embedding space's table of vectors."""
    spaces = conn.execute(
        sa.text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE :prefix"),
        {"prefix": TABLE_PREFIX + "%"},
    ).scalars()
    return set(DERIVED_TABLES) | set(spaces)
