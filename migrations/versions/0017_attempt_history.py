"""Attempts kept as River and Oban keep them: the job row carries its current attempt (its number, when it
started, which session runs it, its lease, and now its run id), and ``job_attempts`` keeps only the
attempts that did not succeed (failed, retried later, waited out a rate limit, interrupted, cancelled,
dropped): a successful attempt is the job row's own start and finish. Rows of succeeded attempts go.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02

Plain ``ALTER TABLE ... ADD COLUMN`` on every dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("async_jobs", sa.Column("run_id", sa.String(36), nullable=True))
    # the run of each job's newest attempt (what a running or completed job's attempt is shown with)
    op.execute(
        "UPDATE async_jobs SET run_id = (SELECT a.run_id FROM job_attempts AS a WHERE a.job_id = async_jobs.id "
        "ORDER BY a.attempt DESC, a.started_at DESC LIMIT 1)"
    )
    op.execute("DELETE FROM job_attempts WHERE outcome = 'SUCCEEDED'")


def downgrade() -> None:
    op.drop_column("async_jobs", "run_id")
