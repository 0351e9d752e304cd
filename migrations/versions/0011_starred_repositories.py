"""Starred-repository recommendations: the starred repositories, the ETag cache of fetched pages, each
ranking run's results; and a job type for the sync (on the GitHub pool).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30

SQLite cannot change a CHECK constraint in place, so ``async_jobs`` is rebuilt (``db.schema_ops``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.schema_ops import set_job_types

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TYPES = (
    "CARD_ANALYSIS", "SCRAP_REFINE", "TIL_GENERATION", "TIL_GITHUB_COMMIT", "RECALL_QUIZ_GENERATION",
    "GITHUB_STAR_RECOMMENDATION",
)  # fmt: skip
NEW_TYPES = (*OLD_TYPES, "GITHUB_STAR_SYNC")


def upgrade() -> None:
    set_job_types(OLD_TYPES, NEW_TYPES)
    op.create_table(
        "starred_repositories",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("full_name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("language", sa.String(length=100), nullable=True),
        sa.Column("topics", sa.Text(), nullable=False),
        sa.Column("stars", sa.Integer(), nullable=False),
        sa.Column("html_url", sa.String(length=500), nullable=False),
        sa.Column("starred_at", sa.DateTime(), nullable=False),
        sa.Column("pushed_at", sa.DateTime(), nullable=True),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("fork", sa.Boolean(), nullable=False),
        sa.Column("gone", sa.Boolean(), nullable=False),
        sa.Column("not_interested", sa.Boolean(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.Column("embedding_model", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_starred_repositories")),
        sa.UniqueConstraint("full_name", name=op.f("uq_starred_repositories_full_name")),
    )
    op.create_table(
        "http_cache",
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("etag", sa.String(length=200), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("url", name=op.f("pk_http_cache")),
    )
    op.create_table(
        "star_recommendations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("repository_id", sa.String(length=36), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["starred_repositories.id"],
            name=op.f("fk_star_recommendations_repository_id_starred_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_star_recommendations")),
    )
    op.create_index("ix_star_recommendations_run_id_rank", "star_recommendations", ["run_id", "rank"])
    op.create_index("ix_star_recommendations_repository_id", "star_recommendations", ["repository_id"])


def downgrade() -> None:
    op.drop_index("ix_star_recommendations_repository_id", table_name="star_recommendations")
    op.drop_index("ix_star_recommendations_run_id_rank", table_name="star_recommendations")
    op.drop_table("star_recommendations")
    op.drop_table("http_cache")
    op.drop_table("starred_repositories")
    op.execute("DELETE FROM async_jobs WHERE job_type = 'GITHUB_STAR_SYNC'")
    set_job_types(NEW_TYPES, OLD_TYPES)
