"""`san doctor`: what this installation runs on, gathered without changing anything."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from san_desktop import __version__
from san_desktop.core.credentials import keyring_status
from san_desktop.core.errors import DatabaseTooNewError, SanError
from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.backends import library_url
from san_desktop.db.backends.sqlite.engine import SqliteDriver, choose_driver, load_sqlite_vec, stdlib_loads_extensions
from san_desktop.db.backends.sqlite.migrate import inspect_database
from san_desktop.db.migrate import head_revision, known_revisions
from san_desktop.services.secrets import AI_API_KEY, GITHUB_TOKEN, secret_with_source


@dataclass(frozen=True)
class DoctorReport:
    app_version: str
    python_version: str
    python_executable: str
    platform: str
    sqlite_driver: str
    sqlite_version: str
    stdlib_sqlite_loads_extensions: bool
    sqlite_vec_version: str
    data_dir: str
    database_kind: str  # "SQLite file" or "PostgreSQL server" (database.url or $SAN_DATABASE_URL)
    database_file: str  # the file, or the server's database as people name it (never its password)
    database_server: str  # a server's version and its extensions ("" for a file)
    database_exists: bool
    database_revision: str | None
    code_head_revision: str
    database_status: str
    keyring_backend: str
    keyring_usable: bool
    keyring_message: str
    ai_key_source: str  # "keyring", the environment variable's name, or "none"
    github_token_source: str
    embedded_model: str  # the shipped sentence encoder, its license, and whether it loads here
    embedded_model_loads: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sqlite_vec_version(driver: SqliteDriver) -> str:
    conn = driver.module.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        load_sqlite_vec(conn)
        return str(conn.execute("SELECT vec_version()").fetchone()[0])
    except Exception as exc:
        return f"unavailable ({exc})"
    finally:
        conn.close()


def _database_status(path: Path, driver: SqliteDriver) -> tuple[str | None, str]:
    """Where the database stands, decided by the same inspection the app makes before it opens it."""
    try:
        state = inspect_database(path, driver)
    except DatabaseTooNewError as exc:
        return exc.db_revision, f"refused: newer than this version ({exc})"
    except SanError as exc:
        return None, f"refused: {exc}"
    if not state.exists:
        return None, "not created yet (made on first start)"
    if state.up_to_date:
        writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
        return state.revision, "up to date" if writable else "up to date, but read-only: SAN Desktop cannot write it"
    if state.revision is None:
        return None, "empty (migrated on next start)"
    return state.revision, f"will be migrated from {state.revision} to {state.head} on next start"


def _server_status(url: str) -> tuple[str, str, bool, str | None, str]:
    """(where, server facts, reachable, revision, status) of a server's library, read without changing it."""
    from san_desktop.db.backends.postgres.server import (
        describe,
        explained,
        make_server_engine,
        read_revision,
        server_facts,
    )
    from san_desktop.services.secrets import database_password

    where = describe(url)
    engine = make_server_engine(url, password=database_password())
    try:
        facts = server_facts(engine)
        with engine.connect() as conn:
            revision, has_tables = read_revision(conn)
    except Exception as exc:
        return where, "", False, None, f"refused: {explained(exc, where)}"
    finally:
        engine.dispose()
    said = ", ".join(
        f"{name} {version}" if version else f"{name} available (installed by the first start)"
        for name, version in sorted(facts.extensions.items())
    )
    missing = ", ".join(facts.missing)
    server = f"PostgreSQL {facts.server_version}; {said or 'no extensions'}" + (
        f"; MISSING: {missing} (similar cards and word search work without, more slowly)" if missing else ""
    )
    head = head_revision()
    if revision is not None and revision not in known_revisions():
        status = f"refused: newer than this version (schema revision {revision}; this version knows up to {head})"
    elif revision is None:
        status = "refused: it holds tables but no SAN Desktop schema" if has_tables else "empty (made on first start)"
    elif revision == head:
        status = "up to date"
    else:
        status = f"will be migrated from {revision} to {head} on next start"
    return where, server, True, revision, status


def collect(data_dir: Path) -> DoctorReport:
    driver = choose_driver()
    head = head_revision()
    try:
        url = library_url(data_dir)
    except ValueError as exc:
        url, refused = "", f"refused: the library's URL ({DATABASE_URL_ENV}, else database.url) is not usable: {exc}"
    else:
        refused = ""
    if refused:
        kind, where, server, exists, revision, status = "PostgreSQL server", "(not usable)", "", False, None, refused
    elif url:
        where, server, exists, revision, status = _server_status(url)
        kind = "PostgreSQL server"
    else:
        kind, server = "SQLite file", ""
        file = database_path(data_dir)
        revision, status = _database_status(file, driver)
        where, exists = str(file), file.exists()
    kr_name, kr_ok, kr_message = keyring_status()
    return DoctorReport(
        app_version=__version__,
        python_version=platform.python_version(),
        python_executable=sys.executable,
        platform=platform.platform(),
        sqlite_driver=driver.name,
        sqlite_version=driver.sqlite_version,
        stdlib_sqlite_loads_extensions=stdlib_loads_extensions(),
        sqlite_vec_version=_sqlite_vec_version(driver),
        data_dir=str(data_dir),
        database_kind=kind,
        database_file=where,
        database_server=server,
        database_exists=exists,
        database_revision=revision,
        code_head_revision=head,
        database_status=status,
        keyring_backend=kr_name,
        keyring_usable=kr_ok,
        keyring_message=kr_message,
        ai_key_source=secret_with_source(AI_API_KEY)[1],
        github_token_source=secret_with_source(GITHUB_TOKEN)[1],
        **_embedded_model(),
    )


def _embedded_model() -> dict[str, Any]:
    """Loads the encoder (a second or two): whether it works on this machine is what the doctor is for."""
    from san_desktop.ai import encoder

    said = encoder.described()
    loads = encoder.warm_up()
    return {"embedded_model": said if loads else f"{said}: {encoder.failure()}", "embedded_model_loads": loads}
