"""PostgreSQL: every time is ``timestamp with time zone``.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05

Every time SAN Desktop stores is UTC. The earlier revisions declared plain ``DateTime`` columns, which SQLite
keeps as text and PostgreSQL makes ``timestamp without time zone``; there the database's own clock
(``now()``, which job leases are measured by once several machines share a database) compares with a time
only through the session's time zone. On PostgreSQL this turns each such column into ``timestamp with time
zone``, reading the stored values as UTC; on SQLite it does nothing (it has no time zones).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _columns(kind: str) -> list[tuple[str, str]]:
    rows = op.get_bind().execute(
        sa.text(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND data_type = :kind ORDER BY table_name, column_name"
        ),
        {"kind": kind},
    )
    return [(str(table), str(column)) for table, column in rows]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in _columns("timestamp without time zone"):
        op.execute(
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE timestamptz USING "{column}" AT TIME ZONE \'UTC\''
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in _columns("timestamp with time zone"):
        op.execute(
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE timestamp USING "{column}" AT TIME ZONE \'UTC\''
        )
