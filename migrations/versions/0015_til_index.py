"""TIL notes in search and in the vector space of the cards: each day's current TIL text in a word index
(``til_search``) and its vector per model (``til_embeddings``), both written by a new job type,
TIL_INDEXING (the AI pool), whenever a day's current version or the embedding model changes.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02

Existing TILs are indexed by the recovery sweep after the upgrade (their text is in files, not rows: a
migration does not read them). ``til_embeddings`` is a plain table on every dialect; the word index is FTS5,
SQLite only, like revisions 0007 and 0014.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.schema_ops import set_job_types

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TYPES = (
    "CARD_ANALYSIS", "SCRAP_REFINE", "TIL_GENERATION", "TIL_GITHUB_COMMIT", "RECALL_QUIZ_GENERATION",
    "GITHUB_STAR_RECOMMENDATION", "GITHUB_STAR_SYNC", "PAGE_FETCH",
)  # fmt: skip
NEW_TYPES = (*OLD_TYPES, "TIL_INDEXING")


def upgrade() -> None:
    set_job_types(OLD_TYPES, NEW_TYPES)
    op.create_table(
        "til_embeddings",
        sa.Column("summary_id", sa.String(36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["summary_id"],
            ["daily_summaries.id"],
            name="fk_til_embeddings_summary_id_daily_summaries",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("summary_id", name="pk_til_embeddings"),
    )
    op.create_index("ix_til_embeddings_model_id", "til_embeddings", ["model_id"])
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "CREATE VIRTUAL TABLE til_search USING fts5(summary_id UNINDEXED, version UNINDEXED, title, body, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    op.execute(
        "CREATE TRIGGER til_search_delete AFTER DELETE ON daily_summaries BEGIN "
        "DELETE FROM til_search WHERE summary_id = OLD.id; END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS til_search_delete")
        op.execute("DROP TABLE IF EXISTS til_search")
    op.drop_index("ix_til_embeddings_model_id", table_name="til_embeddings")
    op.drop_table("til_embeddings")
    op.execute("DELETE FROM async_jobs WHERE job_type = 'TIL_INDEXING'")
    set_job_types(NEW_TYPES, OLD_TYPES)
