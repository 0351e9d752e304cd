"""The schema on a PostgreSQL server: every revision runs up, the data-moving ones with rows in them; a newer
or a foreign database is refused unchanged; machines upgrading at once take turns."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest
import sqlalchemy as sa
from alembic import command

from san_desktop.core.errors import DatabaseTooNewError, NotADatabaseError
from san_desktop.db.backends.postgres.server import describe, make_server_engine, migrate_server, server_facts
from san_desktop.db.migrate import _revision_chain, alembic_config, head_revision
from san_desktop.db.vectors import from_stored, to_blob


@pytest.fixture
def engine(postgres_url: str) -> Iterator[sa.Engine]:
    server = make_server_engine(postgres_url)
    yield server
    server.dispose()


def _upgrade(engine: sa.Engine, revision: str) -> None:
    with engine.begin() as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def _revision(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        return str(conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one())


def _run(engine: sa.Engine, *statements: str, **params: object) -> None:
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(sa.text(statement), params)


def _rows_before(engine: sa.Engine, revision: str, vectors: np.ndarray) -> None:
    """What a library had in it when ``revision`` came (the rows the SQLite tests of that revision use)."""
    if revision == "0008":
        _run(
            engine,
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s1', 'TEXT', 'text s1', 'hs1', '2026-01-01 00:00:00')",
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES ('c1', 's1', 't', 's', '2026-01-01 00:00:00', '2026-01-01 00:00:00')",
        )
        _run(
            engine,
            "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) "
            "VALUES ('c1', 'm', 512, :vector, '2026-01-01 00:00:00')",
            vector=to_blob(vectors[0]),
        )
    if revision == "0016":
        _run(
            engine,
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s2', 'TEXT', 'text s2', 'hs2', '2026-01-01 09:00:00')",
            *(
                "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
                f"updated_at) VALUES ('{job}', '{job_type}', '{target}', '{status}', 1, 3, '2026-01-01', '2026-01-01')"
                for job, job_type, target, status in (
                    ("j1", "CARD_ANALYSIS", "s1", "CANCELLED"),
                    ("j2", "SCRAP_REFINE", "s1", "FAILED"),
                    ("j3", "CARD_ANALYSIS", "s2", "COMPLETED"),
                )
            ),
        )
    if revision == "0026":
        _run(
            engine,
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at, deleted_at) "
            "VALUES ('s3', 'TEXT', 'deleted before the Trash', 'hs3', '2026-01-01 09:00:00', '2026-01-02 09:00:00')",
        )
    if revision == "0017":
        _run(
            engine,
            *(
                "INSERT INTO job_attempts (id, job_id, attempt, run_id, session_id, pool, started_at, ended_at, "
                f"outcome) VALUES ('a{attempt}', 'j3', {attempt}, '{run}', 'sess', 'AI', "
                f"'2026-01-01 00:00:0{attempt}', '2026-01-01 00:00:0{attempt}', '{outcome}')"
                for attempt, run, outcome in ((1, "r1", "RETRY_SCHEDULED"), (2, "r2", "SUCCEEDED"))
            ),
        )


def test_every_revision_runs_up_on_postgresql_with_rows_in_the_ones_that_move_data(engine: sa.Engine) -> None:
    vectors = np.random.default_rng(3).standard_normal((1, 512)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for revision in _revision_chain():
        _rows_before(engine, revision, vectors)
        _upgrade(engine, revision)
        assert _revision(engine) == revision

    with engine.connect() as conn:
        # 0008: vectors compacted to 8-bit codes
        dim, blob = conn.execute(sa.text("SELECT dim, vector FROM card_embeddings")).one()
        assert len(blob) == 512 + 4
        assert float(from_stored(blob, dim) @ vectors[0]) > 0.999
        # 0016: stopped work copied from failed or cancelled jobs
        stopped = conn.execute(
            sa.text("SELECT id, fetch_stopped, analysis_stopped, refine_stopped FROM scraps ORDER BY id")
        ).all()
        assert [tuple(row) for row in stopped] == [
            ("s1", False, True, True),
            ("s2", False, False, False),
            ("s3", False, False, False),
        ]
        # 0017: only attempts that did not succeed are kept; each job has its newest run
        assert conn.execute(sa.text("SELECT id, outcome FROM job_attempts")).all() == [("a1", "RETRY_SCHEDULED")]
        assert conn.execute(sa.text("SELECT run_id FROM async_jobs WHERE id = 'j3'")).scalar_one() == "r2"
        # 0019: every time is a timestamp with time zone, the stored ones read as UTC whatever the session's zone
        kinds = conn.execute(
            sa.text(
                "SELECT DISTINCT data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND data_type LIKE 'timestamp%'"
            )
        ).scalars()
        assert set(kinds) == {"timestamp with time zone"}
        # 0020: the cards already there are in the word index
        assert conn.execute(sa.text("SELECT card_id, title, summary FROM card_search")).all() == [("c1", "t", "s")]
        conn.exec_driver_sql("SET TIME ZONE 'Asia/Seoul'")
        created = conn.execute(sa.text("SELECT created_at FROM scraps WHERE id = 's2'")).scalar_one()
        assert created == datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
        # 0026: a scrap deleted before the Trash is an entry of its own
        entries = conn.execute(sa.text("SELECT id, kind, label, deleted_at FROM trash_entries")).all()
        assert [tuple(row) for row in entries] == [
            ("s3", "SCRAP", "deleted before the Trash", datetime(2026, 1, 2, 9, 0, tzinfo=UTC))
        ]
        assert conn.execute(sa.text("SELECT trash_id FROM scraps WHERE id = 's3'")).scalar_one() == "s3"


def test_migrate_server_creates_the_schema_once(engine: sa.Engine) -> None:
    first = migrate_server(engine)
    assert (first.previous, first.head, first.backup) == (None, head_revision(), None)
    second = migrate_server(engine)
    assert (second.previous, second.upgraded) == (head_revision(), False)
    assert {"scraps", "knowledge_cards", "async_jobs", "job_attempts"} <= set(sa.inspect(engine).get_table_names())


def test_machines_upgrading_at_once_take_turns(postgres_url: str) -> None:
    engines = [make_server_engine(postgres_url) for _ in range(3)]
    results: list[object] = []
    start = threading.Barrier(len(engines))

    def upgrade(engine: sa.Engine) -> None:
        start.wait()
        try:
            results.append(migrate_server(engine))
        except Exception as exc:  # collected: an error in a thread would be lost
            results.append(exc)

    threads = [threading.Thread(target=upgrade, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for engine in engines:
        engine.dispose()
    previous = [getattr(result, "previous", result) for result in results]
    # one upgraded, the others waited and found it done
    assert sorted(previous, key=str) == sorted([None, head_revision(), head_revision()], key=str)


def test_a_newer_database_is_refused_and_left_unchanged(engine: sa.Engine) -> None:
    migrate_server(engine)
    _run(engine, "UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(DatabaseTooNewError) as refused:
        migrate_server(engine)
    assert "9999" in str(refused.value)
    assert describe(engine.url) in str(refused.value)
    assert "It was not changed" in str(refused.value)
    assert _revision(engine) == "9999"


def test_someone_elses_database_is_not_adopted(engine: sa.Engine) -> None:
    _run(engine, "CREATE TABLE invoices (id integer PRIMARY KEY)")
    with pytest.raises(NotADatabaseError, match="no SAN Desktop schema revision"):
        migrate_server(engine)
    assert set(sa.inspect(engine).get_table_names()) == {"invoices"}


def test_the_description_of_a_server_database_never_shows_its_password() -> None:
    url = "postgresql+psycopg://ana:s3cret-pw@db.example.org:6543/library"
    assert describe(url) == "library on db.example.org:6543"
    assert "s3cret" not in describe(url)


def test_server_facts_name_the_version_and_the_extensions(engine: sa.Engine) -> None:
    facts = server_facts(engine)
    assert facts.server_version.split(".")[0].isdigit()
    assert set(facts.extensions) == {"vector", "pg_trgm"}
    assert facts.missing == ()
    assert facts.extensions["vector"] is None  # available, not installed yet
