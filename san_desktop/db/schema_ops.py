"""Operations migrations share (each migration stays as it was written; these only keep one copy), each done by
the database's own way (``db.backends.<database>.schema``)."""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from san_desktop.db.backends import schema_of


def _check(types: Sequence[str]) -> str:
    return "job_type IN (" + ", ".join(f"'{value}'" for value in types) + ")"


def set_job_types(old: Sequence[str], new: Sequence[str]) -> None:
    """Change the job types ``async_jobs.job_type`` accepts from ``old`` to ``new`` (SQLite rebuilds the table:
    it cannot change a CHECK constraint in place)."""
    conn = op.get_bind()
    schema_of(conn).change_job_type_check(conn, _check(old), _check(new))
