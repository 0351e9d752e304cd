"""A table made by another connection (a new vector space's index, say, made by a card job) must not break
the next write on a connection that has run statements before: SQLite then fails a DELETE whose foreign keys
cascade into a table with a trigger on a full-text index ("no such table: tags", once, on the first statement
after the change; SQLite 3.40 and 3.50 alike). Undo import met it when its import's first card made the index
table (a flaky GUI test); deleting a scrap or a tag could meet it the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.db.database import Database, open_database
from san_desktop.db.models import Category, KnowledgeCard, Tag, card_tags
from san_desktop.db.tables import scraps
from tests.support.db import raw_connection


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    opened = open_database(tmp_path / "san.db")
    yield opened
    opened.dispose()


def made_elsewhere(database: Database, name: str) -> None:
    """Another connection (another thread's, or another process's) adds a table."""
    with raw_connection(database.file) as other:
        other.execute(f"CREATE TABLE {name} (x)")


def test_a_cascading_delete_after_a_table_was_made_elsewhere(database: Database) -> None:
    with database.write_connection() as conn:  # the pooled connection has its schema now
        conn.execute(sa.insert(Tag).values(id="t1", name="wal", name_key="wal"))
    made_elsewhere(database, "made_after_the_tag")

    with database.write_connection() as conn:  # the same pooled connection: its first statement since
        unused = ~sa.exists().where(card_tags.c.tag_id == Tag.id)
        deleted = conn.execute(sa.delete(Tag).where(unused)).rowcount

    assert deleted == 1


def test_an_orm_delete_after_a_table_was_made_elsewhere(database: Database) -> None:
    with database.write() as session:
        session.add(Category(id="c1", name="Databases", name_key="databases"))
    made_elsewhere(database, "made_after_the_category")

    with database.write() as session:
        session.execute(sa.delete(scraps).where(scraps.c.id == "none"))
        session.execute(sa.delete(KnowledgeCard).where(KnowledgeCard.id == "none"))

    with database.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(Category)) == 1
