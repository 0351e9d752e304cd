"""Jobs remember whether their last error was transient or permanent; claim order index.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

``error_kind`` lets the recovery sweep retry FAILED jobs whose error was transient, and the job monitor
tell "will retry" from "needs you". The claim query takes the oldest runnable job by id, so the queue
index is (status, id) instead of (status, run_after).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild): SQLite accepts a column CHECK constraint here.
    op.execute(
        "ALTER TABLE async_jobs ADD COLUMN error_kind VARCHAR(40) "
        "CONSTRAINT ck_async_jobs_error_kind CHECK (error_kind IN ('TRANSIENT', 'PERMANENT'))"
    )
    op.drop_index("ix_async_jobs_status_run_after", table_name="async_jobs")
    op.create_index("ix_async_jobs_status_id", "async_jobs", ["status", "id"])


def downgrade() -> None:
    op.drop_index("ix_async_jobs_status_id", table_name="async_jobs")
    op.create_index("ix_async_jobs_status_run_after", "async_jobs", ["status", "run_after"])
    with op.batch_alter_table("async_jobs") as batch:
        batch.drop_column("error_kind")
