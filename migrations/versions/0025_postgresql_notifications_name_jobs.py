"""PostgreSQL: a job's notification names the job.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05

Revision 0022 notified ``san_jobs`` with an empty payload, and a listener then read the jobs changed since a
little before the newest change it knew. But a row's ``updated_at`` is stamped before its transaction commits,
by a machine's own estimate of the server's time: a change stamped earlier than that look-back and committed
later was never read (a machine whose clock estimate lagged, or a slow commit on a loaded machine). Now each
inserted row, and each updated one whose ``updated_at`` changed (what a listener reads; a lease extended is
not news), notifies its job's id. Notifications are delivered when, and only if, their transaction commits,
in commit order, so a listener that reads the named jobs sees every change whatever its stamp. PostgreSQL
sends identical ones of one transaction once. Deleting jobs (pruning) notifies nothing: nobody was told of
deletions. Nothing on SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS san_jobs_notify ON async_jobs")
    op.execute(
        "CREATE OR REPLACE FUNCTION san_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN PERFORM pg_notify('san_jobs', NEW.id); RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER san_jobs_notify_insert AFTER INSERT ON async_jobs "
        "FOR EACH ROW EXECUTE FUNCTION san_jobs_notify()"
    )
    op.execute(
        "CREATE TRIGGER san_jobs_notify_update AFTER UPDATE ON async_jobs FOR EACH ROW "
        "WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at) EXECUTE FUNCTION san_jobs_notify()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS san_jobs_notify_insert ON async_jobs")
    op.execute("DROP TRIGGER IF EXISTS san_jobs_notify_update ON async_jobs")
    op.execute(
        "CREATE OR REPLACE FUNCTION san_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN PERFORM pg_notify('san_jobs', ''); RETURN NULL; END $$"
    )
    op.execute(
        "CREATE TRIGGER san_jobs_notify AFTER INSERT OR UPDATE OR DELETE ON async_jobs "
        "FOR EACH STATEMENT EXECUTE FUNCTION san_jobs_notify()"
    )
