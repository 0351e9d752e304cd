"""PostgreSQL: the library tells its listeners when jobs or change notices are written.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05

Every statement that writes ``async_jobs`` notifies the channel ``san_jobs``, and every one that adds to
``change_notices`` notifies ``san_changes`` (``db.backends.postgres.server.JOBS_CHANNEL`` and ``CHANGES_CHANNEL``): open
windows and idle runners on every machine learn at once that something changed, rather than by polling. A
notification goes out when its transaction commits, and PostgreSQL sends identical ones of one transaction
once. Nothing on SQLite (one machine; its processes look for changes).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHANNELS = {"async_jobs": ("san_jobs", "INSERT OR UPDATE OR DELETE"), "change_notices": ("san_changes", "INSERT")}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, (channel, events) in CHANNELS.items():
        op.execute(
            f"CREATE FUNCTION {channel}_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN PERFORM pg_notify('{channel}', ''); RETURN NULL; END $$"
        )
        op.execute(
            f"CREATE TRIGGER {channel}_notify AFTER {events} ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {channel}_notify()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, (channel, _events) in CHANNELS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {channel}_notify ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS {channel}_notify()")
