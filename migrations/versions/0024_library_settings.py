"""Settings a library shared by several machines keeps for all of them (``library_settings``).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05

On a server, where the TILs are committed (GitHub repository, branch, path template) and how quizzes are
scheduled (the desired retention) are the library's, not a machine's: every machine reads and writes them
here; the rest stays in each data folder's settings.json. Made on every dialect; a SQLite library keeps all of
its settings in its folder.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.db.types import UTCDateTime

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "library_settings",
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_library_settings")),
    )


def downgrade() -> None:
    op.drop_table("library_settings")
