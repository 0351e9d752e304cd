"""Generated files of a library on a server are kept in the database (``artifacts``).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05

A TIL's text and the other files a run writes were files in the data folder; machines sharing a library on a
PostgreSQL server each have their own folder, and one could not read what another wrote. There they are rows
of ``artifacts`` (small texts), under the keys the files had. The table is made on every dialect; a SQLite
library keeps using its folder.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.types import UTCDateTime

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "artifacts",
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_artifacts")),
    )


def downgrade() -> None:
    op.drop_table("artifacts")
