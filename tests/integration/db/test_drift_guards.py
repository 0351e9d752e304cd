"""The three guards against drift between code and database (seed 002) and proof that each can fail."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from san_desktop.core import enums
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.workflow import TilStatus
from san_desktop.db.backends.postgres.server import make_server_engine, migrate_server
from san_desktop.db.backends.sqlite.schema import derived_table_names
from san_desktop.db.backends.sqlite.vectors import card_index_table, ensure_card_index
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, Base
from tests.integration.db.drift import enum_columns, enum_constraint_mismatches, schema_differences

UNIQUE_FAILED = "UNIQUE constraint failed|duplicate key value violates unique constraint"
CHECK_FAILED = "CHECK constraint failed|violates check constraint"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, sqlite_db: Database) -> Iterator[sa.Engine]:
    """A database migrated to head, as a SQLite file and on a PostgreSQL server."""
    if request.param == "sqlite":
        yield sqlite_db.engine
        return
    server = make_server_engine(request.getfixturevalue("postgres_url"))
    migrate_server(server)
    yield server
    server.dispose()


# --- 1. migrations produce exactly the schema the models describe ------------------------------


def test_migrated_schema_matches_the_models(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        assert schema_differences(conn, Base.metadata) == []


def test_the_schema_guard_hides_vec0_indexes_and_their_shadow_tables(sqlite_db: Database) -> None:
    with sqlite_db.engine.begin() as conn:
        # a vec0 index and its shadow tables exist in real databases: the filter must hide them
        table = ensure_card_index(conn, "local-hash-ngram-v1", 8)
        assert table in derived_table_names(conn)
        assert len(derived_table_names(conn)) > 1  # the shadow tables are recognised too
        assert schema_differences(conn, Base.metadata) == []


def test_schema_guard_reports_a_missing_index(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX ix_async_jobs_updated_at")
        differences = schema_differences(conn, Base.metadata)
    assert any(diff[0] == "add_index" and diff[1].name == "ix_async_jobs_updated_at" for diff in differences)


def test_schema_guard_without_the_vec_filter_would_see_vec_tables(sqlite_db: Database) -> None:
    with sqlite_db.engine.begin() as conn:
        table = ensure_card_index(conn, "some-model", 16)
        differences = schema_differences(conn, Base.metadata, include_name=lambda *_args: True)
    removed = {diff[1].name for diff in differences if diff[0] == "remove_table"}
    assert table in removed
    assert card_index_table("some-model", 16) == table


# --- 2. every enum's values equal its CHECK constraint in the migrated database ----------------


def test_every_enum_column_has_a_check_listing_exactly_its_values(engine: sa.Engine) -> None:
    expected = enum_columns(Base.metadata)
    # all the enums the app stores are covered
    stored_enums = {
        enums.JobType,
        enums.JobStatus,
        enums.JobPool,
        enums.AttemptOutcome,
        enums.SourceType,
        enums.TilVersionKind,
        enums.CommitStatus,
        enums.CommitTarget,
        enums.QuizType,
        enums.QuizState,
        TilStatus,
    }
    assert {frozenset(member.value for member in e) for e in stored_enums} <= {
        frozenset(values) for values in expected.values()
    }
    with engine.connect() as conn:
        assert enum_constraint_mismatches(conn, expected) == []


def test_enum_guard_catches_a_value_added_in_code_but_not_migrated(engine: sa.Engine) -> None:
    expected = enum_columns(Base.metadata)
    # what a developer adding a job type without a migration makes
    expected[("async_jobs", "job_type")] = {member.value for member in JobType} | {"CARD_REEMBED"}
    with engine.connect() as conn:
        problems = enum_constraint_mismatches(conn, expected)
    assert problems == ["async_jobs.job_type: values missing from the CHECK constraint: ['CARD_REEMBED']"]
    # and the database really would reject it: the incident the guard exists for
    with pytest.raises(IntegrityError, match=CHECK_FAILED), engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
                "updated_at) VALUES ('j', 'CARD_REEMBED', 't', 'PENDING', 0, 3, :at, :at)"
            ),
            {"at": "2026-01-01 00:00:00"},
        )


def test_enum_guard_catches_a_column_without_constraint(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        problems = enum_constraint_mismatches(conn, {("async_jobs", "payload"): {"A"}})
    assert problems == ["async_jobs.payload: no CHECK constraint listing its values"]


# --- 3. one active job per (target_id, job_type); finished ones may share it -------------------


def _job(status: JobStatus, job_type: JobType = JobType.CARD_ANALYSIS, target: str = "scrap-1") -> AsyncJob:
    return AsyncJob(job_type=job_type, target_id=target, status=status)


def test_finished_jobs_may_share_a_target_and_type(engine: sa.Engine) -> None:
    sessions = sessionmaker(engine)
    with sessions.begin() as session:
        session.add_all([_job(JobStatus.COMPLETED), _job(JobStatus.FAILED), _job(JobStatus.CANCELLED)])
        session.add_all([_job(JobStatus.COMPLETED), _job(JobStatus.FAILED)])
        session.add(_job(JobStatus.PENDING))  # one active among finished ones is fine
    with sessions() as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(AsyncJob)) == 6


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (JobStatus.PENDING, JobStatus.PENDING),
        (JobStatus.PENDING, JobStatus.PROCESSING),
        (JobStatus.PROCESSING, JobStatus.PENDING),
    ],
)
def test_a_second_active_job_is_rejected(engine: sa.Engine, first: JobStatus, second: JobStatus) -> None:
    sessions = sessionmaker(engine)
    with sessions.begin() as session:
        session.add(_job(first))
    with pytest.raises(IntegrityError, match=UNIQUE_FAILED), sessions.begin() as session:
        session.add(_job(second))


def _active_keys(engine: sa.Engine) -> list[tuple[str, str]]:
    with sessionmaker(engine)() as session:
        rows = session.execute(
            sa.select(AsyncJob.target_id, AsyncJob.job_type).where(AsyncJob.status == JobStatus.PENDING)
        )
        return sorted((target, str(job_type)) for target, job_type in rows)


def test_active_jobs_of_other_types_or_targets_do_not_conflict(engine: sa.Engine) -> None:
    with sessionmaker(engine).begin() as session:
        session.add(_job(JobStatus.PENDING))
        session.add(_job(JobStatus.PENDING, job_type=JobType.SCRAP_REFINE))
        session.add(_job(JobStatus.PENDING, target="scrap-2"))
    assert _active_keys(engine) == [
        ("scrap-1", "CARD_ANALYSIS"),
        ("scrap-1", "SCRAP_REFINE"),
        ("scrap-2", "CARD_ANALYSIS"),
    ]


def test_a_finished_job_can_be_followed_by_a_new_active_one(engine: sa.Engine) -> None:
    sessions = sessionmaker(engine)
    with sessions.begin() as session:
        job = _job(JobStatus.PENDING)
        session.add(job)
    with sessions.begin() as session:
        session.execute(sa.update(AsyncJob).values(status=JobStatus.FAILED))
        session.add(_job(JobStatus.PENDING))
    assert _active_keys(engine) == [("scrap-1", "CARD_ANALYSIS")]
    with sessions() as session:
        statuses = session.scalars(sa.select(AsyncJob.status).order_by(AsyncJob.id)).all()
    assert statuses == [JobStatus.FAILED, JobStatus.PENDING]
