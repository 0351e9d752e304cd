"""An imported item is found again when it is imported again (issue 40): ``scraps.import_key`` names what it is in
its source (a vault's note by its path, a Kindle highlight by its book and location), ``scrap_versions`` keeps
the text an import replaced, so that undoing that import puts it back, and ``scraps.given_card`` holds the card a
SAN Markdown export's note carries (its first card keeps it).

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.types import UTCDateTime

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("scraps", sa.Column("given_card", sa.Text(), nullable=True))
    op.add_column("scraps", sa.Column("import_key", sa.Text(), nullable=True))
    op.create_index("ix_scraps_import_key", "scraps", ["import_key"])
    op.create_table(
        "scrap_versions",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("scrap_id", sa.String(36), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("refined_content", sa.Text(), nullable=True),
        sa.Column("given_tags", sa.Text(), nullable=True),
        sa.Column("import_batch_id", sa.String(36), nullable=True),
        sa.Column("replaced_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["scrap_id"], ["scraps.id"], name=op.f("fk_scrap_versions_scrap_id_scraps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scrap_versions")),
    )
    op.create_index("ix_scrap_versions_scrap_id", "scrap_versions", ["scrap_id"])
    op.create_index("ix_scrap_versions_import_batch_id", "scrap_versions", ["import_batch_id"])
    op.add_column("import_batches", sa.Column("updated", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("import_batches", "updated")
    op.drop_index("ix_scrap_versions_import_batch_id", table_name="scrap_versions")
    op.drop_index("ix_scrap_versions_scrap_id", table_name="scrap_versions")
    op.drop_table("scrap_versions")
    op.drop_index("ix_scraps_import_key", table_name="scraps")
    op.drop_column("scraps", "import_key")
    op.drop_column("scraps", "given_card")
