"""Cards a person corrected: which of a card's fields (title, summary, tags, category) were edited by hand,
so that analysing the card again keeps them unless the person says otherwise.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01

Plain ``ALTER TABLE ... ADD COLUMN`` on every dialect: rebuilding ``knowledge_cards`` (Alembic's batch mode)
would drop the search index's triggers on it, and with foreign keys on would delete the rows that refer to it.
Existing cards were made by analysis alone: nothing of theirs is edited.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EDITED = ("title_edited", "summary_edited", "tags_edited", "category_edited")


def upgrade() -> None:
    for column in EDITED:
        op.add_column("knowledge_cards", sa.Column(column, sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    for column in reversed(EDITED):
        op.drop_column("knowledge_cards", column)  # ALTER TABLE ... DROP COLUMN (SQLite 3.35+)
