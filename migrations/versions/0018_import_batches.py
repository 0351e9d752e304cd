"""Imports: each import of a folder or file is a batch (``import_batches``) that its scraps name, so that Undo
import removes exactly what it brought in; and the tags a source gave a scrap (a note's front matter, a
bookmark's folders), which its card takes.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05

Plain ``ALTER TABLE ... ADD COLUMN`` on ``scraps``, as revision 0016 (a rebuild would drop the search index's
triggers); the batch id has no foreign key, as a job's target has none: an undone batch keeps its row.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.types import UTCDateTime

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "import_batches",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("imported", sa.Integer(), nullable=False),
        sa.Column("duplicates", sa.Integer(), nullable=False),
        sa.Column("refused", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("undone_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_import_batches"),
    )
    op.add_column("scraps", sa.Column("import_batch_id", sa.String(36), nullable=True))
    op.add_column("scraps", sa.Column("given_tags", sa.Text(), nullable=True))
    op.create_index("ix_scraps_import_batch_id", "scraps", ["import_batch_id"])


def downgrade() -> None:
    op.drop_index("ix_scraps_import_batch_id", table_name="scraps")
    op.drop_column("scraps", "given_tags")
    op.drop_column("scraps", "import_batch_id")
    op.drop_table("import_batches")
