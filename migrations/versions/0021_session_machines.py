"""Sessions name their machine: the data folder they run from (``core.paths.machine_id``).

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05

A library that several machines share (on PostgreSQL) has a live session per machine. Recovery ends only the
earlier sessions of its own machine (its instance lock makes those dead) and takes back another machine's
running jobs only when their leases ran out. Rows from before this revision name no machine: they count as
this machine's (a SQLite library has only one). Plain ``ALTER TABLE ... ADD COLUMN`` on every dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("app_sessions", sa.Column("machine_id", sa.String(36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("app_sessions") as batch:
        batch.drop_column("machine_id")
