"""Is the database file sound? Read-only checks made before anything writes to it: the SQLite header
against the file's size, then SQLite's ``PRAGMA quick_check``. No SQLAlchemy here: the entry point starts
the check on a thread (``IntegrityCheck``) before it imports the rest of the app."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from san_desktop.core.errors import (
    DatabaseDamagedError,
    DatabaseLockedError,
    NotADatabaseError,
    StorageFullError,
    is_storage_full,
)
from san_desktop.core.paths import database_path, resolve_data_dir
from san_desktop.core.sqlite_codes import SQLITE_CANTOPEN, SQLITE_CORRUPT, is_locked, sqlite_code
from san_desktop.db.backends.sqlite.driver import SqliteDriver, choose_driver

SQLITE_HEADER = b"SQLite format 3\x00"


def check_sqlite_header(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise NotADatabaseError(path, f"cannot be read: {exc.strerror or exc}") from exc
    if header and not header.startswith(SQLITE_HEADER):
        raise NotADatabaseError(path, "it does not start with the SQLite file header")
    return header


def read_only_rows(path: Path, driver: SqliteDriver, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` run on a read-only connection. A WAL database in a folder SAN cannot write (its
    ``-shm`` file cannot be made) is read as immutable instead: nobody can be writing it there."""
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = driver.module.connect(f"{path.as_uri()}?{query}", uri=True, timeout=10)
        except driver.module.Error as exc:
            raise NotADatabaseError(path, str(exc)) from exc
        try:
            return [tuple(row) for row in conn.execute(sql)]
        except driver.module.OperationalError as exc:
            code = sqlite_code(exc)
            if is_storage_full(exc, path):
                raise StorageFullError(path.parent, "SQLite cannot even open the database to read it") from exc
            if code == SQLITE_CANTOPEN and query == "mode=ro":
                continue
            if is_locked(exc):
                raise DatabaseLockedError(path) from exc
            if code == SQLITE_CORRUPT:
                raise DatabaseDamagedError(path, str(exc), latest_backup(path)) from exc
            raise NotADatabaseError(path, str(exc)) from exc
        except driver.module.DatabaseError as exc:
            if sqlite_code(exc) == SQLITE_CORRUPT:
                raise DatabaseDamagedError(path, str(exc), latest_backup(path)) from exc
            raise NotADatabaseError(path, str(exc)) from exc
        finally:
            conn.close()
    raise NotADatabaseError(path, "it cannot be opened for reading")


def latest_backup(path: Path) -> Path | None:
    """The newest ``<name>.backup-…`` file beside the database (names sort by time)."""
    backups = sorted(path.parent.glob(f"{path.stem}.backup-*{path.suffix}"))
    return backups[-1] if backups else None


def _header_problem(path: Path, header: bytes) -> str | None:
    """What the file's size says against its header (a truncated or padded copy), cheaply."""
    if len(header) < 100:
        return "the file is shorter than a SQLite header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"the header gives an impossible page size ({page_size})"
    # SQLite writes whole pages, so any other size is a torn copy. (The header's page count is not
    # compared: a checkpoint of another process may write page 1 before it extends the file.)
    size = path.stat().st_size
    if size % page_size:
        return f"the file size ({size} bytes) is not a whole number of {page_size}-byte pages"
    return None


def check_integrity(path: Path, driver: SqliteDriver) -> None:
    """Refuse a damaged database before anything writes to it: the header against the file size, then
    SQLite's ``PRAGMA quick_check`` (every page and index entry read once, no full cross-check). Raises
    ``DatabaseDamagedError`` naming the latest backup."""
    header = check_sqlite_header(path)
    if problem := _header_problem(path, header):
        raise DatabaseDamagedError(path, problem, latest_backup(path))
    try:
        rows = [row[0] for row in read_only_rows(path, driver, "PRAGMA quick_check(5)")]
    except NotADatabaseError as exc:  # it has the SQLite header: what SQLite cannot read is damage
        raise DatabaseDamagedError(path, str(exc.__cause__ or exc), latest_backup(path)) from exc
    if rows != ["ok"]:
        detail = "; ".join(" ".join(str(row).split()) for row in rows)
        raise DatabaseDamagedError(path, detail[:300], latest_backup(path))


class IntegrityCheck:
    """``check_integrity`` of a database file on a thread of its own, started early: SQLite reads every
    page (a fifth of a second at 50,000 cards) without holding the GIL while the window's modules are
    imported. Whoever is about to write asks ``passed`` first, which waits for the verdict."""

    def __init__(self, path: Path, driver: SqliteDriver) -> None:
        self.path = path
        self.driver = driver
        self._checked = False  # True once a file was there and passed
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="san-integrity-check", daemon=True)

    @classmethod
    def start(cls, path: Path, driver: SqliteDriver) -> IntegrityCheck:
        check = cls(path, driver)
        check._thread.start()
        return check

    def _run(self) -> None:
        try:
            if self.path.exists() and self.path.stat().st_size > 0:  # a new database has nothing to check
                check_integrity(self.path, self.driver)
                self._checked = True
        except BaseException as exc:  # raised by passed(), on the thread that asks
            self._error = exc

    def passed(self, path: Path, driver: SqliteDriver) -> bool:
        """Wait for the check. Raises what it found wrong with ``path``; True when it checked this very
        file with this driver and found it sound, False when it did not check it (another file or driver,
        or no file was there yet): then the caller checks it itself."""
        if path != self.path or driver != self.driver:
            return False
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._checked


def start_integrity_check(data_dir: str | os.PathLike[str] | None) -> IntegrityCheck | None:
    """The check of the database in ``data_dir`` (as ``start_backend`` resolves it), started on its thread;
    None when it cannot start (an unknown driver...): ``start_backend`` then meets the problem again and
    says it, in its usual order."""
    try:
        path, driver = database_path(resolve_data_dir(data_dir)), choose_driver()
    except Exception:
        return None
    return IntegrityCheck.start(path, driver)
