"""A library on a PostgreSQL server: the engine for its URL, bringing its schema to head, and what ``san
doctor`` says of it.

Every connection works in UTC (times are ``timestamp with time zone``; revision 0019) and gives up on a server
that does not answer within ``CONNECT_TIMEOUT_SECONDS`` rather than freezing whoever asked. Schema upgrades
from several machines at once take turns on a PostgreSQL advisory lock (the file lock of a SQLite library
cannot be seen from another machine). No file backup is taken before an upgrade: the server's data is its
administrator's to back up (``pg_dump``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from san_desktop.core.errors import DatabaseTooNewError, NotADatabaseError
from san_desktop.db.migrate import MigrationResult, alembic_config, head_revision, known_revisions

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 10
# pg_advisory_lock key of schema upgrades ("SAN" in ASCII): one machine upgrades, the others wait
MIGRATION_LOCK_KEY = 0x53414E
EXTENSIONS = ("vector", "pg_trgm")  # pgvector for similar cards, pg_trgm for word-part search


def describe(url: sa.URL | str) -> str:
    """The database as people name it, never with its password: ``san on db.example.org:5432``."""
    parsed = sa.make_url(url)
    where = parsed.host or "localhost"
    if parsed.port:
        where = f"{where}:{parsed.port}"
    return f"{parsed.database or '(default)'} on {where}"


def make_server_engine(url: sa.URL | str, *, echo: bool = False) -> sa.Engine:
    """An engine for a PostgreSQL URL (``postgresql+psycopg://…``; a bare ``postgresql://`` gets psycopg)."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    if parsed.get_driver_name() != "psycopg":
        parsed = parsed.set(drivername="postgresql+psycopg")
    connect_args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS, "options": "-c timezone=UTC"}
    return sa.create_engine(parsed, connect_args=connect_args, pool_pre_ping=True, echo=echo)


def read_revision(conn: sa.Connection) -> tuple[str | None, bool]:
    """The stored schema revision (None: no schema yet) and whether the database holds any table."""
    tables = set(sa.inspect(conn).get_table_names())
    revision = None
    if "alembic_version" in tables:
        revision = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one_or_none()
    return revision, bool(tables)


def migrate_server(engine: sa.Engine) -> MigrationResult:
    """Bring the server database to the newest schema this code knows; refuse one that is newer, or that
    holds tables but no SAN Desktop schema, without changing it."""
    head = head_revision()
    where = describe(engine.url)
    with engine.connect() as conn:
        conn.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})")
        conn.commit()
        try:
            current, has_tables = read_revision(conn)
            conn.rollback()
            if current is not None and current not in known_revisions():
                raise DatabaseTooNewError(where, current, head)
            if current is None and has_tables:
                raise NotADatabaseError(where, "it holds tables but no SAN Desktop schema revision")
            if current != head:
                from alembic import command

                with conn.begin():
                    config = alembic_config()
                    config.attributes["connection"] = conn
                    command.upgrade(config, "head")
                log.info("Database %s migrated from %s to %s", where, current or "nothing", head)
        finally:
            conn.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})")
            conn.commit()
    return MigrationResult(current, head, None)


@dataclass(frozen=True)
class ServerFacts:
    """What ``san doctor`` reports of a server database."""

    where: str
    server_version: str
    extensions: dict[str, str | None]  # name -> installed version, or None: available but not installed
    missing: tuple[str, ...]  # wanted extensions the server does not have at all


def server_facts(engine: sa.Engine) -> ServerFacts:
    with engine.connect() as conn:
        version = str(conn.exec_driver_sql("SHOW server_version").scalar_one())
        rows = conn.exec_driver_sql(
            "SELECT name, installed_version FROM pg_available_extensions WHERE name = ANY(%(names)s)",
            {"names": list(EXTENSIONS)},
        ).all()
    available = {str(name): (str(installed) if installed else None) for name, installed in rows}
    return ServerFacts(
        where=describe(engine.url),
        server_version=version,
        extensions=available,
        missing=tuple(name for name in EXTENSIONS if name not in available),
    )
