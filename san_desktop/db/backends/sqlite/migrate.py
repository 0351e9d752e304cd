"""Migrate a SQLite library on start: refuse what is not ours or is newer than us, back up, then upgrade to
head."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from san_desktop.core.errors import (
    DatabaseLockedError,
    DatabaseTooNewError,
    NotADatabaseError,
    StorageFullError,
    is_storage_full,
)
from san_desktop.core.instance_lock import FileLock
from san_desktop.core.sqlite_codes import is_locked
from san_desktop.db.backends.sqlite.engine import SqliteDriver, make_engine
from san_desktop.db.backends.sqlite.integrity import (
    IntegrityCheck,
    check_integrity,
    check_sqlite_header,
    read_only_rows,
)
from san_desktop.db.backends.sqlite.integrity import latest_backup as latest_backup
from san_desktop.db.migrate import MigrationResult, alembic_config, head_revision, known_revisions

log = logging.getLogger(__name__)


def _probe(path: Path, driver: SqliteDriver) -> tuple[str | None, list[str]]:
    """Read the stored revision and the table names without writing anything to the file."""
    tables = [row[0] for row in read_only_rows(path, driver, "SELECT name FROM sqlite_master WHERE type = 'table'")]
    revision = None
    if "alembic_version" in tables:
        rows = read_only_rows(path, driver, "SELECT version_num FROM alembic_version")
        revision = rows[0][0] if rows else None
    return revision, tables


@dataclass(frozen=True)
class DatabaseState:
    """What a database file is, read without writing to it (``migrate`` and ``san doctor`` agree)."""

    exists: bool
    revision: str | None  # None: missing, empty, or no schema yet
    head: str

    @property
    def up_to_date(self) -> bool:
        return self.revision == self.head


def inspect_database(
    path: Path, driver: SqliteDriver, *, check: bool = True, checked: IntegrityCheck | None = None
) -> DatabaseState:
    """Raises ``NotADatabaseError`` (not SQLite, or SQLite without SAN's schema), ``DatabaseTooNewError``,
    ``DatabaseDamagedError`` (with ``check``) or ``DatabaseLockedError``; otherwise says where it stands.
    ``checked``: the same integrity check started earlier; its verdict is awaited instead of a second one."""
    head = head_revision()
    if not path.exists() or path.stat().st_size == 0:
        return DatabaseState(path.exists(), None, head)
    if check and (checked is None or not checked.passed(path, driver)):
        check_integrity(path, driver)
    elif not check:
        check_sqlite_header(path)
    current, tables = _probe(path, driver)
    if current is not None and current not in known_revisions():
        raise DatabaseTooNewError(path, current, head)
    if current is None and tables:
        raise NotADatabaseError(path, "it holds tables but no SAN Desktop schema revision")
    return DatabaseState(True, current, head)


def read_revision(path: Path, driver: SqliteDriver) -> str | None:
    """The schema revision stored in ``path`` (None when the file is missing or new); read-only."""
    return inspect_database(path, driver, check=False).revision


def backup_database(path: Path, driver: SqliteDriver, label: str) -> Path:
    """Copy the database (consistently, with SQLite's backup API) to a timestamped file beside it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.stem}.backup-{stamp}-{label}{path.suffix}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.stem}.backup-{stamp}-{label}-{counter}{path.suffix}")
    try:
        source: Any = driver.module.connect(str(path), timeout=30)
        try:
            dest: Any = driver.module.connect(str(target))
            try:
                source.backup(dest)
            finally:
                dest.close()
        finally:
            source.close()
    except (OSError, driver.module.Error) as exc:
        target.unlink(missing_ok=True)
        if is_storage_full(exc):
            raise StorageFullError(target.parent, "no room for the backup taken before an upgrade") from exc
        raise
    return target


MIGRATION_LOCK_TIMEOUT_SECONDS = 300.0


def migrate(path: Path, driver: SqliteDriver, *, checked: IntegrityCheck | None = None) -> MigrationResult:
    """Bring the database at ``path`` to the newest schema this code knows, creating it if needed.

    Every process that opens the database (the window, each command line call) comes through here; an
    upgrade happens under an exclusive lock between processes, once, with one backup, and a damaged
    database is refused before anything writes to it (``checked``: by the check started earlier, whose
    verdict this waits for).
    """
    state = inspect_database(path, driver, checked=checked)
    if state.up_to_date:
        return MigrationResult(state.revision, state.head, None)
    lock = FileLock(path.with_name(path.name + ".migrate.lock"))
    if not lock.acquire_blocking(MIGRATION_LOCK_TIMEOUT_SECONDS):
        raise DatabaseLockedError(path)
    try:
        state = inspect_database(path, driver, check=False)  # another process may have upgraded it meanwhile
        if state.up_to_date:
            return MigrationResult(state.revision, state.head, None)
        return _upgrade(path, driver, state)
    finally:
        lock.release()


def _upgrade(path: Path, driver: SqliteDriver, state: DatabaseState) -> MigrationResult:
    current, head = state.revision, state.head
    existing = path.exists() and path.stat().st_size > 0
    backup = backup_database(path, driver, current or "base") if existing else None
    if backup is not None:
        log.info("Backed up %s to %s before migrating from %s to %s", path, backup, current, head)
    engine = make_engine(path, driver)
    try:
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            from alembic import command

            command.upgrade(config, "head")
    except sa.exc.OperationalError as exc:
        if is_locked(exc):
            raise DatabaseLockedError(path) from exc
        if is_storage_full(exc):
            raise StorageFullError(path, "the schema upgrade could not be written") from exc
        raise
    finally:
        engine.dispose()
    log.info("Database %s migrated from %s to %s", path, current or "nothing", head)
    return MigrationResult(current, head, backup)
