"""Every test runs offscreen, on a temporary data directory, with an in-memory keyring."""

from __future__ import annotations

import os

# Before Qt is imported anywhere: no display is needed or used.
os.environ["QT_QPA_PLATFORM"] = "offscreen"

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from san_desktop.app import SanApp
from san_desktop.bootstrap import Backend, start_backend
from san_desktop.core import credentials, redact
from san_desktop.core.logging_setup import teardown_logging
from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV, JobSettings, Settings, save_settings
from san_desktop.db import vectors
from san_desktop.db.database import Database, open_database, open_server_database
from san_desktop.github import client as github_client
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.store import JobStore
from san_desktop.services import secrets
from san_desktop.ui.common.context import AppContext, build_context
from tests.support.jobs import fast_settings
from tests.support.memory_keyring import MemoryKeyring
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    """No test may touch the user's data directory or keyring, in this process or in children."""
    monkeypatch.setenv("SAN_DATA_DIR", str(tmp_path / "san-data"))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / "xdg" / var.lower()))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv("SAN_SQLITE_DRIVER", raising=False)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)  # the library is the data folder's file unless a test says
    # Child processes cannot share the in-memory backend: make sure they find no real one either.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # module-level state of the app that one test could leave for the next
    monkeypatch.setattr(redact, "_known_secrets", set())
    monkeypatch.setattr(credentials, "_failure", None)  # a keyring that failed in an earlier test
    monkeypatch.setattr(secrets, "_told_unusable", False)
    monkeypatch.setattr(vectors, "_indexes", {})
    monkeypatch.setattr(github_client, "_last_write", {})
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    yield memory
    keyring.set_keyring(previous)
    teardown_logging()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server (with pgvector and pg_trgm) on 127.0.0.1, started when a test first needs it."""
    server = start_temporary()
    yield server
    stop_temporary(server)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new empty database of its own on the test server."""
    return postgres_server.create_database()


@pytest.fixture
def postgres_library_url(postgres_server: PostgresServer) -> str:
    """The URL of a new database of its own on the test server, at the newest schema (what opening it makes)."""
    return postgres_server.create_database(template=postgres_server.migrated_template())


# SAN_TEST_DATABASE=postgresql: every library of the run is on the test server (each test's a database of its own);
# a test marked ``postgresql`` has its library there in every run
TEST_DATABASE_ENV = "SAN_TEST_DATABASE"


@pytest.fixture
def machines(postgres_library_url: str, tmp_path: Path) -> Iterator[tuple[Database, Database]]:
    """A library on the test server as two machines open it: each with a data folder of its own ("laptop" and
    "desktop" under the test's folder)."""
    opened = []
    for name in ("laptop", "desktop"):
        (tmp_path / name).mkdir()
        opened.append(open_server_database(postgres_library_url, tmp_path / name))
    yield opened[0], opened[1]
    for database in opened:
        database.dispose()


@pytest.fixture
def data_dir(tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    on_server = request.node.get_closest_marker("postgresql") is not None
    on_file = request.node.get_closest_marker("sqlite") is not None
    if on_server or (os.environ.get(TEST_DATABASE_ENV) == "postgresql" and not on_file):
        monkeypatch.setenv(DATABASE_URL_ENV, request.getfixturevalue("postgres_library_url"))
    return tmp_path / "san-data"


@pytest.fixture
def db(data_dir: Path) -> Iterator[Database]:
    """A database file migrated to head (never ``create_all``); on a server with SAN_TEST_DATABASE=postgresql."""
    data_dir.mkdir(parents=True, exist_ok=True)
    url = os.environ.get(DATABASE_URL_ENV)
    database = open_server_database(url, data_dir) if url else open_database(database_path(data_dir))
    yield database
    database.dispose()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    """A SQLite library whatever the run's database: for what only SQLite has (vec0 tables, the file)."""
    folder = tmp_path / "sqlite-only"
    folder.mkdir()
    database = open_database(database_path(folder))
    yield database
    database.dispose()


@pytest.fixture
def backend(data_dir: Path, job_settings: JobSettings) -> Iterator[Backend]:
    data_dir.mkdir(parents=True, exist_ok=True)
    save_settings(data_dir, Settings(jobs=job_settings))  # what the facade of these tests loads
    started = start_backend(data_dir, kind="gui", log_to_stderr=False)
    yield started
    started.close()


@pytest.fixture
def job_settings() -> JobSettings:
    return fast_settings()


@pytest.fixture
def registry() -> ProcessorRegistry:
    """Empty: each test registers its own processors for the job types it uses."""
    return ProcessorRegistry()


@pytest.fixture
def app(backend: Backend) -> Iterator[SanApp]:
    """The facade over the test's data directory (with the test's job settings)."""
    facade = SanApp(backend)
    yield facade
    facade.close()


@pytest.fixture
def queue(app: SanApp) -> JobStore:
    return app.queue


@pytest.fixture
def runner(qapp: object, app: SanApp, registry: ProcessorRegistry, job_settings: JobSettings) -> Iterator[JobRunner]:
    job_runner = JobRunner(app.queue, registry, app.backend.require_session(), job_settings)
    yield job_runner
    job_runner.shutdown()
    job_runner.deleteLater()


def _finish(context: AppContext) -> None:
    context.hub.stop()
    context.ops.shutdown()
    context.runner.shutdown()
    for item in (context.hub, context.ops, context.runner):
        item.deleteLater()


@pytest.fixture
def context(app: SanApp, runner: JobRunner) -> Iterator[AppContext]:
    """The window's context around the test's runner (whose registry each test fills)."""
    built = build_context(app, runner=runner)
    yield built
    _finish(built)


@pytest.fixture
def live_context(qapp: object, app: SanApp) -> Iterator[AppContext]:
    """The window's context with the product's processors and the embedded AI provider."""
    built = build_context(app)
    yield built
    _finish(built)


@pytest.fixture
def own_process_context(qapp: object, app: SanApp) -> Iterator[AppContext]:
    """``live_context`` with the embedded AI computing in a child process, as in the app."""
    built = build_context(app, ai_in_own_process=True)
    yield built
    _finish(built)
