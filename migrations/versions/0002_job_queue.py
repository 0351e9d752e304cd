"""The job queue (async_jobs) and its execution record (job_attempts).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=40)


def upgrade() -> None:
    op.create_table(
        "async_jobs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column(
            "job_type",
            _enum(
                "job_type",
                "CARD_ANALYSIS",
                "SCRAP_REFINE",
                "TIL_GENERATION",
                "TIL_GITHUB_COMMIT",
                "RECALL_QUIZ_GENERATION",
                "GITHUB_STAR_RECOMMENDATION",
            ),
            nullable=False,
        ),
        sa.Column("target_id", sa.String(36), nullable=False),
        sa.Column(
            "status",
            _enum("status", "PENDING", "PROCESSING", "COMPLETED", "FAILED", "CANCELLED"),
            nullable=False,
        ),
        sa.Column("payload", sa.Text(), nullable=True),
        sa.Column("error_message", sa.String(1000), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_after", sa.DateTime(), nullable=True),
        sa.Column("owner_session", sa.String(36), nullable=True),
        sa.Column("lease_until", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_async_jobs_attempts_non_negative")),
        sa.CheckConstraint("max_attempts >= 1", name=op.f("ck_async_jobs_max_attempts_positive")),
        sa.ForeignKeyConstraint(
            ["owner_session"],
            ["app_sessions.id"],
            name=op.f("fk_async_jobs_owner_session_app_sessions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_async_jobs")),
    )
    op.create_index("ix_async_jobs_status_run_after", "async_jobs", ["status", "run_after"])
    op.create_index("ix_async_jobs_target_id", "async_jobs", ["target_id"])
    op.create_index("ix_async_jobs_updated_at", "async_jobs", ["updated_at"])
    # At most one job that will still run per (target, type) (seed 001).
    op.create_index(
        "uq_async_jobs_active_target_job_type",
        "async_jobs",
        ["target_id", "job_type"],
        unique=True,
        sqlite_where=sa.text("status IN ('PENDING', 'PROCESSING')"),
        postgresql_where=sa.text("status IN ('PENDING', 'PROCESSING')"),
    )
    op.create_table(
        "job_attempts",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("job_id", sa.String(36), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.String(36), nullable=False),
        sa.Column("session_id", sa.String(36), nullable=False),
        sa.Column("pool", _enum("pool", "AI", "GITHUB"), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column(
            "outcome",
            _enum(
                "outcome",
                "SUCCEEDED",
                "FAILED",
                "RETRY_SCHEDULED",
                "RATE_LIMITED",
                "INTERRUPTED",
                "CANCELLED",
                "STALLED",
                "DISCARDED",
            ),
            nullable=True,
        ),
        sa.Column("error_text", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"], ["async_jobs.id"], name=op.f("fk_job_attempts_job_id_async_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_attempts")),
    )
    op.create_index("ix_job_attempts_job_id", "job_attempts", ["job_id"])
    op.create_index("ix_job_attempts_session_id", "job_attempts", ["session_id"])


def downgrade() -> None:
    op.drop_table("job_attempts")
    op.drop_table("async_jobs")
