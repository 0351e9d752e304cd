"""Recall quizzes: generations per day and quiz types, quizzes with their FSRS state, and every review.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUIZ_STATES = ("NEW", "LEARNING", "REVIEW", "RELEARNING")


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=40)


def upgrade() -> None:
    op.create_table(
        "recall_quiz_generations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("local_date", sa.String(length=10), nullable=False),
        sa.Column("quiz_types", sa.String(length=40), nullable=False),
        sa.Column("made", sa.Integer(), nullable=False),
        sa.Column("dropped", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recall_quiz_generations")),
        sa.UniqueConstraint("local_date", "quiz_types", name=op.f("uq_recall_quiz_generations_local_date_quiz_types")),
    )
    op.create_table(
        "recall_quizzes",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("card_id", sa.String(length=36), nullable=False),
        sa.Column("generation_id", sa.String(length=36), nullable=True),
        sa.Column("quiz_type", _enum("quiz_type", "OX", "SHORT_ANSWER"), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("accepted", sa.Text(), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.Column("state", _enum("state", *QUIZ_STATES), nullable=False),
        sa.Column("fsrs_card", sa.Text(), nullable=False),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("suspended", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["knowledge_cards.id"],
            name=op.f("fk_recall_quizzes_card_id_knowledge_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["generation_id"],
            ["recall_quiz_generations.id"],
            name=op.f("fk_recall_quizzes_generation_id_recall_quiz_generations"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recall_quizzes")),
        sa.UniqueConstraint("card_id", "quiz_type", name=op.f("uq_recall_quizzes_card_id_quiz_type")),
    )
    op.create_index("ix_recall_quizzes_suspended_due_at_state", "recall_quizzes", ["suspended", "due_at", "state"])
    op.create_table(
        "recall_quiz_reviews",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("quiz_id", sa.String(length=36), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("reviewed_at", sa.DateTime(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("state_before", _enum("state_before", *QUIZ_STATES), nullable=False),
        sa.Column("due_after", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["quiz_id"],
            ["recall_quizzes.id"],
            name=op.f("fk_recall_quiz_reviews_quiz_id_recall_quizzes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recall_quiz_reviews")),
    )
    op.create_index("ix_recall_quiz_reviews_quiz_id", "recall_quiz_reviews", ["quiz_id"])


def downgrade() -> None:
    op.drop_index("ix_recall_quiz_reviews_quiz_id", table_name="recall_quiz_reviews")
    op.drop_table("recall_quiz_reviews")
    op.drop_index("ix_recall_quizzes_suspended_due_at_state", table_name="recall_quizzes")
    op.drop_table("recall_quizzes")
    op.drop_table("recall_quiz_generations")
