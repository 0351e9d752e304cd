"""Starred-repository recommendations: the starred repositories, the ETag cache of fetched pages, each
ranking run's results; and a job type for the sync (on the GitHub pool).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30

SQLite cannot change a CHECK constraint in place, so ``async_jobs`` is rebuilt: renamed away the way SQLite
did before 3.26 (``job_attempts`` keeps referring to ``async_jobs`` by name, so dropping the old table
cascades to nothing), made again with the wider CHECK, refilled, and its indexes made again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_TYPES = (
    "CARD_ANALYSIS", "SCRAP_REFINE", "TIL_GENERATION", "TIL_GITHUB_COMMIT", "RECALL_QUIZ_GENERATION",
    "GITHUB_STAR_RECOMMENDATION",
)  # fmt: skip
NEW_TYPES = (*OLD_TYPES, "GITHUB_STAR_SYNC")


def _check(types: Sequence[str]) -> str:
    return "job_type IN (" + ", ".join(f"'{value}'" for value in types) + ")"


def _schema(conn: sa.Connection, kind: str, table: str) -> list[str]:
    rows = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = :kind AND tbl_name = :table AND sql IS NOT NULL"),
        {"kind": kind, "table": table},
    )
    return list(rows.scalars())


def _job_types(old: Sequence[str], new: Sequence[str]) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        op.drop_constraint("ck_async_jobs_job_type", "async_jobs", type_="check")
        op.create_check_constraint("ck_async_jobs_job_type", "async_jobs", _check(new))
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


def upgrade() -> None:
    _job_types(OLD_TYPES, NEW_TYPES)
    op.create_table(
        "starred_repositories",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("full_name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("language", sa.String(length=100), nullable=True),
        sa.Column("topics", sa.Text(), nullable=False),
        sa.Column("stars", sa.Integer(), nullable=False),
        sa.Column("html_url", sa.String(length=500), nullable=False),
        sa.Column("starred_at", sa.DateTime(), nullable=False),
        sa.Column("pushed_at", sa.DateTime(), nullable=True),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("fork", sa.Boolean(), nullable=False),
        sa.Column("gone", sa.Boolean(), nullable=False),
        sa.Column("not_interested", sa.Boolean(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
        sa.Column("embedding_model", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_starred_repositories")),
        sa.UniqueConstraint("full_name", name=op.f("uq_starred_repositories_full_name")),
    )
    op.create_table(
        "http_cache",
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("etag", sa.String(length=200), nullable=False),
        sa.Column("items", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("url", name=op.f("pk_http_cache")),
    )
    op.create_table(
        "star_recommendations",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("repository_id", sa.String(length=36), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["starred_repositories.id"],
            name=op.f("fk_star_recommendations_repository_id_starred_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_star_recommendations")),
    )
    op.create_index("ix_star_recommendations_run_id_rank", "star_recommendations", ["run_id", "rank"])
    op.create_index("ix_star_recommendations_repository_id", "star_recommendations", ["repository_id"])


def downgrade() -> None:
    op.drop_index("ix_star_recommendations_repository_id", table_name="star_recommendations")
    op.drop_index("ix_star_recommendations_run_id_rank", table_name="star_recommendations")
    op.drop_table("star_recommendations")
    op.drop_table("http_cache")
    op.drop_table("starred_repositories")
    op.execute("DELETE FROM async_jobs WHERE job_type = 'GITHUB_STAR_SYNC'")
    _job_types(NEW_TYPES, OLD_TYPES)
