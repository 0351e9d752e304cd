"""Scrapped links become their pages: the page title on the scrap, and a job type that fetches the page
(on the GitHub pool, the network pool).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.schema_ops import set_job_types

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TYPES = (
    "CARD_ANALYSIS", "SCRAP_REFINE", "TIL_GENERATION", "TIL_GITHUB_COMMIT", "RECALL_QUIZ_GENERATION",
    "GITHUB_STAR_RECOMMENDATION", "GITHUB_STAR_SYNC",
)  # fmt: skip
NEW_TYPES = (*OLD_TYPES, "PAGE_FETCH")


def upgrade() -> None:
    set_job_types(OLD_TYPES, NEW_TYPES)
    with op.batch_alter_table("scraps") as batch:
        batch.add_column(sa.Column("title", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scraps") as batch:
        batch.drop_column("title")
    op.execute("DELETE FROM async_jobs WHERE job_type = 'PAGE_FETCH'")
    set_job_types(NEW_TYPES, OLD_TYPES)
