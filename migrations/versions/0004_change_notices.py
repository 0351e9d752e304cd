"""Change notices: what one process changed, for the other open windows to show.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

A scrap deleted or added with the command line shows in an open window within a poll; the window reads
the notices above the last id it saw (ids grow in commit order), skipping its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "change_notices",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("origin", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("item_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_notices")),
    )
    op.create_index("ix_change_notices_created_at", "change_notices", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_change_notices_created_at", table_name="change_notices")
    op.drop_table("change_notices")
