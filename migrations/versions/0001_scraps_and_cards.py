"""Scraps, knowledge cards, categories, tags, card embeddings and app sessions.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Enum value lists are literal on purpose: a migration is frozen in time, and the drift guard test
compares them with the Python enums of the code at head.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _enum(name: str, *values: str) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=40)


def upgrade() -> None:
    op.create_table(
        "app_sessions",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("app_version", sa.String(40), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_sessions")),
    )
    for table in ("categories", "tags"):
        op.create_table(
            table,
            sa.Column("id", sa.String(36), nullable=False),
            sa.Column("name", sa.String(100), nullable=False),
            sa.Column("name_key", sa.String(100), nullable=False),
            sa.Column("created_at", sa.DateTime(), nullable=False),
            sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
            sa.UniqueConstraint("name_key", name=op.f(f"uq_{table}_name_key")),
        )
    op.create_table(
        "scraps",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("source_type", _enum("source_type", "TEXT", "HTML", "URL", "FILE"), nullable=False),
        sa.Column("source_ref", sa.Text(), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("raw_content", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("refined_content", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("deleted_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scraps")),
    )
    op.create_index("ix_scraps_created_at", "scraps", ["created_at"])
    op.create_index(
        "uq_scraps_source_type_content_hash",
        "scraps",
        ["source_type", "content_hash"],
        unique=True,
        sqlite_where=sa.text("deleted_at IS NULL"),
        postgresql_where=sa.text("deleted_at IS NULL"),
    )
    op.create_table(
        "knowledge_cards",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("scrap_id", sa.String(36), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("category_id", sa.String(36), nullable=True),
        sa.Column("embedding_model", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["category_id"],
            ["categories.id"],
            name=op.f("fk_knowledge_cards_category_id_categories"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["scrap_id"], ["scraps.id"], name=op.f("fk_knowledge_cards_scrap_id_scraps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_knowledge_cards")),
        sa.UniqueConstraint("scrap_id", name=op.f("uq_knowledge_cards_scrap_id")),
    )
    op.create_index("ix_knowledge_cards_category_id", "knowledge_cards", ["category_id"])
    op.create_table(
        "card_embeddings",
        sa.Column("card_id", sa.String(36), nullable=False),
        sa.Column("model_id", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["knowledge_cards.id"],
            name=op.f("fk_card_embeddings_card_id_knowledge_cards"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("card_id", name=op.f("pk_card_embeddings")),
    )
    op.create_index("ix_card_embeddings_model_id", "card_embeddings", ["model_id"])
    op.create_table(
        "card_tags",
        sa.Column("card_id", sa.String(36), nullable=False),
        sa.Column("tag_id", sa.String(36), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["knowledge_cards.id"],
            name=op.f("fk_card_tags_card_id_knowledge_cards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["tag_id"], ["tags.id"], name=op.f("fk_card_tags_tag_id_tags"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("card_id", "tag_id", name=op.f("pk_card_tags")),
    )
    op.create_index("ix_card_tags_tag_id", "card_tags", ["tag_id"])


def downgrade() -> None:
    for table in (
        "card_tags",
        "card_embeddings",
        "knowledge_cards",
        "scraps",
        "tags",
        "categories",
        "app_sessions",
    ):
        op.drop_table(table)
