"""What a library on PostgreSQL holds beside the tables Alembic's models describe: the word indexes of revision
0020 (kept by its migrations) and pgvector's tables of card vectors (``vectors``), derived from the other tables
and invisible to autogenerate and the drift guard. And what PostgreSQL's migrations do their own way
(``db.schema_ops``)."""

from __future__ import annotations

import sqlalchemy as sa

from san_desktop.db.backends.postgres.vectors import TABLE_PREFIX

DERIVED_TABLES = frozenset({"card_search", "til_search"})
DERIVED_INDEXES = frozenset({"ix_scraps_content_words"})


def derived_table_names(conn: sa.Connection) -> set[str]:
    """The word index tables, and each embedding space's table of vectors."""
    spaces = conn.execute(
        sa.text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE :prefix"),
        {"prefix": TABLE_PREFIX + "%"},
    ).scalars()
    return set(DERIVED_TABLES) | set(spaces)


def change_job_type_check(conn: sa.Connection, old: str, new: str) -> None:
    """Make ``async_jobs``' CHECK of its job types ``old`` be ``new``: in place."""
    from alembic import op

    # (``op.f``: the name as it is; a bare name would get the naming convention's prefix a second time)
    op.drop_constraint(op.f("ck_async_jobs_job_type"), "async_jobs", type_="check")
    op.create_check_constraint(op.f("ck_async_jobs_job_type"), "async_jobs", new)
