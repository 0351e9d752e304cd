"""The daily TIL: summaries with their workflow state, versions (text in files), step outputs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

``daily_summaries.status`` holds the workflow states of ``core.workflow.TilStatus``; a finished step's
output is a ``til_step_outputs`` row, so a retry resumes after it; every generated or edited text is a
``til_versions`` row whose version is unique per summary (a collision fails the run, never overwrites).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIL_STATES = (
    "CREATED", "COLLECTING", "COLLECTED", "DRAFTING", "DRAFTED", "EMBEDDING", "EMBEDDED", "LINKING", "LINKED",
    "COMPLETED", "FAILED",
)  # fmt: skip


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=40)


def upgrade() -> None:
    op.create_table(
        "daily_summaries",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("local_date", sa.String(length=10), nullable=False),
        sa.Column("status", _enum("status", *TIL_STATES), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=True),
        sa.Column("current_version", sa.Integer(), nullable=True),
        sa.Column("last_failed_step", sa.String(length=20), nullable=True),
        sa.Column("last_error_message", sa.String(length=1000), nullable=True),
        sa.Column("input_revision", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_daily_summaries")),
        sa.UniqueConstraint("local_date", name=op.f("uq_daily_summaries_local_date")),
    )
    op.create_table(
        "til_step_outputs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("summary_id", sa.String(length=36), nullable=False),
        sa.Column("step", sa.String(length=20), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("artifact_key", sa.String(length=300), nullable=True),
        sa.Column("data", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["summary_id"],
            ["daily_summaries.id"],
            name=op.f("fk_til_step_outputs_summary_id_daily_summaries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_til_step_outputs")),
    )
    op.create_index("ix_til_step_outputs_summary_id_step", "til_step_outputs", ["summary_id", "step"])
    op.create_table(
        "til_versions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("summary_id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("kind", _enum("kind", "GENERATED", "EDITED"), nullable=False),
        sa.Column("artifact_key", sa.String(length=300), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("input_revision", sa.String(length=64), nullable=True),
        sa.Column("run_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["summary_id"],
            ["daily_summaries.id"],
            name=op.f("fk_til_versions_summary_id_daily_summaries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_til_versions")),
        sa.UniqueConstraint("summary_id", "version", name=op.f("uq_til_versions_summary_id_version")),
    )


def downgrade() -> None:
    op.drop_table("til_versions")
    op.drop_index("ix_til_step_outputs_summary_id_step", table_name="til_step_outputs")
    op.drop_table("til_step_outputs")
    op.drop_table("daily_summaries")
