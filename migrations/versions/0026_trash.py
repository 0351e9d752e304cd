"""The Trash: what is deleted together (one scrap, several, an import undone) is one entry of ``trash_entries``
that its scraps name (``scraps.trash_id``); their cards, quizzes and reviews stay with them, hidden, until the
entry is restored, emptied, or purged ``trash.keep_days`` after it was deleted.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06

Plain ``ALTER TABLE ... ADD COLUMN`` on ``scraps``, as revision 0018 (a rebuild would drop the search index's
triggers), without a foreign key for the same reason. A scrap deleted before this revision becomes an entry of
its own, under its own id, deleted when it was.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.types import UTCDateTime

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "trash_entries",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column(
            "kind",
            sa.Enum(
                "SCRAP", "SCRAPS", "IMPORT", name="trash_kind", native_enum=False, create_constraint=True, length=40
            ),
            nullable=False,
        ),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("import_batch_id", sa.String(36), nullable=True),
        sa.Column("deleted_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trash_entries")),
    )
    op.create_index("ix_trash_entries_deleted_at", "trash_entries", ["deleted_at"])
    op.add_column("scraps", sa.Column("trash_id", sa.String(36), nullable=True))
    op.create_index("ix_scraps_trash_id", "scraps", ["trash_id"])
    op.execute(
        "INSERT INTO trash_entries (id, kind, label, deleted_at) "
        "SELECT id, 'SCRAP', substr(coalesce(title, content), 1, 200), deleted_at FROM scraps "
        "WHERE deleted_at IS NOT NULL"
    )
    op.execute("UPDATE scraps SET trash_id = id WHERE deleted_at IS NOT NULL")


def downgrade() -> None:
    op.drop_index("ix_scraps_trash_id", table_name="scraps")
    op.drop_column("scraps", "trash_id")
    op.drop_index("ix_trash_entries_deleted_at", table_name="trash_entries")
    op.drop_table("trash_entries")
