"""TIL commit requests, each with its own status beside its job (seed 001).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=40)


def upgrade() -> None:
    op.create_table(
        "til_github_commits",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("summary_id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", _enum("status", "PENDING", "PROCESSING", "COMPLETED", "FAILED"), nullable=False),
        sa.Column("target", _enum("target", "GITHUB", "LOCAL"), nullable=False),
        sa.Column("repository", sa.String(length=500), nullable=False),
        sa.Column("branch", sa.String(length=250), nullable=False),
        sa.Column("path", sa.String(length=500), nullable=False),
        sa.Column("message", sa.String(length=500), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("commit_sha", sa.String(length=64), nullable=True),
        sa.Column("html_url", sa.String(length=500), nullable=True),
        sa.Column("error_message", sa.String(length=1000), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["summary_id"],
            ["daily_summaries.id"],
            name=op.f("fk_til_github_commits_summary_id_daily_summaries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_til_github_commits")),
    )
    op.create_index("ix_til_github_commits_summary_id", "til_github_commits", ["summary_id"])
    op.create_index(
        "ix_til_github_commits_target_content", "til_github_commits", ["repository", "branch", "content_hash"]
    )


def downgrade() -> None:
    op.drop_index("ix_til_github_commits_target_content", table_name="til_github_commits")
    op.drop_index("ix_til_github_commits_summary_id", table_name="til_github_commits")
    op.drop_table("til_github_commits")
