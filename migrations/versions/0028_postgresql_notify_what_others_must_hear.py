"""PostgreSQL: a job notifies only what other machines must hear of it: that it was queued (inserted, retried,
given back), or cancelled.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07

Revision 0025 notified ``san_jobs`` with the job's id at every update that stamped ``updated_at``: a claim, a
completion and a failure too, two notifications for every job that ran, each read back by every runner (its
own writer's included). What another machine must act on is a job it may run (one queued, retried or given
back to the queue) and one it must stop (cancelled). A job's result that windows show (a new card) is told by
its change notice; the job monitor of another machine reads the rest when it looks.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS san_jobs_notify_update ON async_jobs")
    op.execute(
        "CREATE TRIGGER san_jobs_notify_update AFTER UPDATE ON async_jobs FOR EACH ROW "
        "WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('PENDING', 'CANCELLED')) "
        "EXECUTE FUNCTION san_jobs_notify()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS san_jobs_notify_update ON async_jobs")
    op.execute(
        "CREATE TRIGGER san_jobs_notify_update AFTER UPDATE ON async_jobs FOR EACH ROW "
        "WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at) EXECUTE FUNCTION san_jobs_notify()"
    )
