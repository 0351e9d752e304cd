"""What a SQLite library holds beside the tables Alembic manages: virtual tables (FTS5 word indexes, sqlite-vec's
vec0 tables of card vectors) and their shadow tables, derived from the other tables and invisible to
autogenerate and the drift guard. And what SQLite's migrations do their own way (``db.schema_ops``)."""

from __future__ import annotations

import re

import sqlalchemy as sa

DERIVED_INDEXES: frozenset[str] = frozenset()

_SHADOW_SUFFIX = re.compile(
    r"_(chunks|info|rowids|auxiliary|vector_chunks\d+|metadatachunks\d+|metadatatext\d+|data|idx|content|docsize|config)$"
)


def derived_table_names(conn: sa.Connection) -> set[str]:
    """Names of every virtual table (sqlite-vec's vec0, FTS5 and its vocabulary) and of the shadow tables
    made for them: derived indexes that Alembic's models do not describe."""
    rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all()
    virtual = {
        name
        for name, sql in rows
        if sql and re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+(vec0|fts5|fts5vocab)\b", sql, re.I | re.S)
    }
    shadows = {
        name
        for name, _sql in rows
        for table in virtual
        if name.startswith(f"{table}_") and _SHADOW_SUFFIX.fullmatch(name[len(table) :])
    }
    return virtual | shadows


def _schema(conn: sa.Connection, kind: str, table: str) -> list[str]:
    rows = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = :kind AND tbl_name = :table AND sql IS NOT NULL"),
        {"kind": kind, "table": table},
    )
    return list(rows.scalars())


def change_job_type_check(conn: sa.Connection, old: str, new: str) -> None:
    """Make ``async_jobs``' CHECK of its job types ``old`` be ``new``. SQLite cannot change a CHECK constraint in
    place: the table is renamed away the way SQLite did before 3.26, made again with the new CHECK, refilled, and
    its indexes made again; ``job_attempts`` is rebuilt beside it so that its foreign key names the new table."""
    from alembic import op

    (jobs,) = _schema(conn, "table", "async_jobs")
    (attempts,) = _schema(conn, "table", "job_attempts")
    assert old in jobs, "async_jobs is not as the previous revision left it"
    jobs_indexes, attempts_indexes = _schema(conn, "index", "async_jobs"), _schema(conn, "index", "job_attempts")
    # With foreign keys on, renaming async_jobs away makes job_attempts refer to the renamed table: it is
    # rebuilt too, referring to the new async_jobs, before the old one goes (so dropping it cascades to
    # nothing).
    op.execute("ALTER TABLE async_jobs RENAME TO async_jobs_old")
    op.execute(jobs.replace(old, new))
    op.execute("INSERT INTO async_jobs SELECT * FROM async_jobs_old")
    op.execute("ALTER TABLE job_attempts RENAME TO job_attempts_old")
    op.execute(attempts)  # as it was: it names async_jobs
    op.execute("INSERT INTO job_attempts SELECT * FROM job_attempts_old")
    op.execute("DROP TABLE job_attempts_old")
    op.execute("DROP TABLE async_jobs_old")
    for ddl in (*jobs_indexes, *attempts_indexes):
        op.execute(ddl)
