"""Operations migrations share (each migration stays as it was written; these only keep one copy).

SQLite cannot change a CHECK constraint in place, so widening the job types rebuilds ``async_jobs``: renamed
away the way SQLite did before 3.26, made again with the new CHECK, refilled, and its indexes made again;
``job_attempts`` is rebuilt beside it so that its foreign key names the new table.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


def _check(types: Sequence[str]) -> str:
    return "job_type IN (" + ", ".join(f"'{value}'" for value in types) + ")"


def _schema(conn: sa.Connection, kind: str, table: str) -> list[str]:
    rows = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = :kind AND tbl_name = :table AND sql IS NOT NULL"),
        {"kind": kind, "table": table},
    )
    return list(rows.scalars())


def set_job_types(old: Sequence[str], new: Sequence[str]) -> None:
    """Change the job types ``async_jobs.job_type`` accepts from ``old`` to ``new``."""
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        # (``op.f``: the name as it is; a bare name would get the naming convention's prefix a second time)
        op.drop_constraint(op.f("ck_async_jobs_job_type"), "async_jobs", type_="check")
        op.create_check_constraint(op.f("ck_async_jobs_job_type"), "async_jobs", _check(new))
        return
    (jobs,) = _schema(conn, "table", "async_jobs")
    (attempts,) = _schema(conn, "table", "job_attempts")
    assert _check(old) in jobs, "async_jobs is not as the previous revision left it"
    jobs_indexes, attempts_indexes = _schema(conn, "index", "async_jobs"), _schema(conn, "index", "job_attempts")
    # With foreign keys on, renaming async_jobs away makes job_attempts refer to the renamed table: it is
    # rebuilt too, referring to the new async_jobs, before the old one goes (so dropping it cascades to
    # nothing).
    op.execute("ALTER TABLE async_jobs RENAME TO async_jobs_old")
    op.execute(jobs.replace(_check(old), _check(new)))
    op.execute("INSERT INTO async_jobs SELECT * FROM async_jobs_old")
    op.execute("ALTER TABLE job_attempts RENAME TO job_attempts_old")
    op.execute(attempts)  # as it was: it names async_jobs
    op.execute("INSERT INTO job_attempts SELECT * FROM job_attempts_old")
    op.execute("DROP TABLE job_attempts_old")
    op.execute("DROP TABLE async_jobs_old")
    for ddl in (*jobs_indexes, *attempts_indexes):
        op.execute(ddl)
