"""Migrate on start: refuse what is not ours or is newer than us, back up, then upgrade to head."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from san_desktop.core.errors import DatabaseLockedError, DatabaseTooNewError, NotADatabaseError
from san_desktop.db.engine import SqliteDriver, make_engine

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class MigrationResult:
    previous: str | None  # None: a new database
    head: str
    backup: Path | None

    @property
    def upgraded(self) -> bool:
        return self.previous != self.head


def alembic_config() -> Config:
    """Alembic configuration pointing at the scripts shipped in the package (works when installed)."""
    config = Config()
    config.set_main_option("script_location", str(files("san_desktop.migrations")))
    return config


def script_directory() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    head = script_directory().get_current_head()
    assert head is not None, "the migrations folder has no revision"
    return head


def _check_sqlite_header(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise NotADatabaseError(path, f"cannot be read: {exc.strerror or exc}") from exc
    if header and header != SQLITE_HEADER:
        raise NotADatabaseError(path, "it does not start with the SQLite file header")


def _probe(path: Path, driver: SqliteDriver) -> tuple[str | None, list[str]]:
    """Read the stored revision and the table names without writing anything to the file."""
    try:
        conn = driver.module.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=10)
    except driver.module.Error as exc:
        raise NotADatabaseError(path, str(exc)) from exc
    try:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        revision = None
        if "alembic_version" in tables:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        return revision, tables
    except driver.module.OperationalError as exc:
        if "locked" in str(exc).lower():
            raise DatabaseLockedError(path) from exc
        raise NotADatabaseError(path, str(exc)) from exc
    except driver.module.DatabaseError as exc:
        raise NotADatabaseError(path, str(exc)) from exc
    finally:
        conn.close()


def read_revision(path: Path, driver: SqliteDriver) -> str | None:
    """The schema revision stored in ``path`` (None when the file is missing or new); read-only."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    _check_sqlite_header(path)
    return _probe(path, driver)[0]


def backup_database(path: Path, driver: SqliteDriver, label: str) -> Path:
    """Copy the database (consistently, with SQLite's backup API) to a timestamped file beside it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.stem}.backup-{stamp}-{label}{path.suffix}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.stem}.backup-{stamp}-{label}-{counter}{path.suffix}")
    source: Any = driver.module.connect(str(path), timeout=30)
    try:
        dest: Any = driver.module.connect(str(target))
        try:
            source.backup(dest)
        finally:
            dest.close()
    finally:
        source.close()
    return target


def migrate(path: Path, driver: SqliteDriver) -> MigrationResult:
    """Bring the database at ``path`` to the newest schema this code knows, creating it if needed."""
    head = head_revision()
    known = {rev.revision for rev in script_directory().walk_revisions()}
    existing = path.exists() and path.stat().st_size > 0
    current: str | None = None
    if existing:
        _check_sqlite_header(path)
        current, tables = _probe(path, driver)
        if current is not None and current not in known:
            raise DatabaseTooNewError(path, current, head)
        if current is None and tables:
            raise NotADatabaseError(path, "it holds tables but no SAN Desktop schema revision")
    if current == head:
        return MigrationResult(current, head, None)

    backup = backup_database(path, driver, current or "base") if existing else None
    if backup is not None:
        log.info("Backed up %s to %s before migrating from %s to %s", path, backup, current, head)
    engine = make_engine(path, driver)
    try:
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    finally:
        engine.dispose()
    log.info("Database %s migrated from %s to %s", path, current or "nothing", head)
    return MigrationResult(current, head, backup)
