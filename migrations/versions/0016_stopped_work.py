"""What a scrap's stopped work is, on the scrap: its page fetch, analysis or refinement failed for good or was
cancelled by the person (the recovery sweep leaves such work for them to retry, never re-runs it by itself).
The sweep read this from the failed or cancelled job rows, which are pruned now; existing ones are copied.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02

Plain ``ALTER TABLE ... ADD COLUMN`` on every dialect, as revision 0013 (a rebuild would drop the search
index's triggers on ``scraps``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STOPPED = {"fetch_stopped": "PAGE_FETCH", "analysis_stopped": "CARD_ANALYSIS", "refine_stopped": "SCRAP_REFINE"}


def upgrade() -> None:
    for column, job_type in STOPPED.items():
        op.add_column("scraps", sa.Column(column, sa.Boolean(), nullable=False, server_default=sa.false()))
        op.execute(
            f"UPDATE scraps SET {column} = TRUE WHERE id IN (SELECT target_id FROM async_jobs "
            f"WHERE job_type = '{job_type}' AND status IN ('FAILED', 'CANCELLED'))"
        )


def downgrade() -> None:
    for column in reversed(list(STOPPED)):
        op.drop_column("scraps", column)
