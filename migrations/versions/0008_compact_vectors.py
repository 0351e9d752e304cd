"""Compact storage: card vectors as 8-bit codes with a scale, card tags without a rowid, one index fewer.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30

A 512-dimension float32 vector (2 KiB) took a 4 KiB page of its own: ``card_embeddings`` was a third of the
database. Stored as a float32 scale and one int8 per dimension (``san_desktop.db.vectors.to_stored``), seven
share a page. Rows are converted here in batches; readers accept both forms, so a row this missed (none
should) still works. ``card_tags`` was kept three times (rowid table, primary key index, tag index); as a
WITHOUT ROWID table (SQLite) its primary key is the table. ``ix_job_attempts_session_id`` served no query
and cost every claim a page write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 2000

# the tag triggers as revision 0007 made them (dropping the old card_tags table dropped them)
TAGS = (
    "(SELECT coalesce(group_concat(t.name, ' '), '') FROM card_tags AS ct JOIN tags AS t ON t.id = ct.tag_id "
    "WHERE ct.card_id = {card})"
)


def _rebuild_card_tags(*, without_rowid: bool) -> None:
    op.execute(
        "CREATE TABLE card_tags_new ("
        "card_id VARCHAR(36) NOT NULL, tag_id VARCHAR(36) NOT NULL, "
        "CONSTRAINT pk_card_tags PRIMARY KEY (card_id, tag_id), "
        "CONSTRAINT fk_card_tags_card_id_knowledge_cards FOREIGN KEY (card_id) "
        "REFERENCES knowledge_cards (id) ON DELETE CASCADE, "
        "CONSTRAINT fk_card_tags_tag_id_tags FOREIGN KEY (tag_id) REFERENCES tags (id) ON DELETE CASCADE"
        ")" + (" WITHOUT ROWID" if without_rowid else "")
    )
    op.execute("INSERT INTO card_tags_new (card_id, tag_id) SELECT card_id, tag_id FROM card_tags")
    op.execute("DROP TABLE card_tags")  # its index and triggers go with it
    # Renamed as SQLite did before 3.26: the new-style rename re-checks every trigger, and the search
    # index's card trigger names card_tags, which does not exist until the rename is done.
    op.execute("PRAGMA legacy_alter_table = ON")
    op.execute("ALTER TABLE card_tags_new RENAME TO card_tags")
    op.execute("PRAGMA legacy_alter_table = OFF")
    op.create_index("ix_card_tags_tag_id", "card_tags", ["tag_id"])
    for event, row in (("INSERT", "NEW"), ("DELETE", "OLD")):
        op.execute(
            f"CREATE TRIGGER card_search_tags_{event.lower()} AFTER {event} ON card_tags BEGIN "
            f"UPDATE card_search SET tags = {TAGS.format(card=f'{row}.card_id')} "
            f"WHERE rowid = (SELECT rowid FROM knowledge_cards WHERE id = {row}.card_id); "
            "END"
        )


def _recode_vectors(size: str, recode: Callable[[bytes, int], bytes]) -> None:
    """Rewrite the ``card_embeddings`` vectors whose length is ``size`` (SQL over ``dim``), in batches."""
    conn = op.get_bind()
    select = sa.text(
        f"SELECT card_id, dim, vector FROM card_embeddings WHERE length(vector) = {size} AND card_id > :after "
        "ORDER BY card_id LIMIT :batch"
    )
    update = sa.text("UPDATE card_embeddings SET vector = :vector WHERE card_id = :card_id")
    after = ""
    while rows := conn.execute(select, {"after": after, "batch": BATCH}).all():
        conn.execute(update, [{"card_id": row.card_id, "vector": recode(row.vector, row.dim)} for row in rows])
        after = rows[-1].card_id


def upgrade() -> None:
    from san_desktop.db.vectors import from_blob, to_stored

    _recode_vectors("dim * 4", lambda blob, _dim: to_stored(from_blob(blob)))
    op.drop_index("ix_job_attempts_session_id", table_name="job_attempts")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_card_tags(without_rowid=True)


def downgrade() -> None:
    from san_desktop.db.vectors import from_stored, to_blob

    op.create_index("ix_job_attempts_session_id", "job_attempts", ["session_id"])
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_card_tags(without_rowid=False)
    _recode_vectors("dim + 4", lambda blob, dim: to_blob(from_stored(blob, dim)))
