"""Restoring a full backup (``san import FILE.zip``) into a data folder that holds no library with data.

Everything is checked before anything is in place: the zip is ours and within bounds (``transfer.backup_reader``
decides that from its directory and manifest, before a byte is written), the folder holds no library with
data and no symbolic link to write through, its disk has room for what the members say they hold. The members
are then extracted into a temporary folder inside the target, each read with a running count against its header
and its CRC checked, the database checked with SQLite's ``PRAGMA integrity_check`` and against the manifest's
row counts (an older schema is migrated when the library is opened, as always), and moved into place only when
whole, the database last; a failure or a cancel leaves the folder as it was. A dry run does all of it but the
writing (and so the database's own check), and writes nothing at all."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.core.errors import SanError, StorageFullError, is_storage_full
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.core.paths import DATABASE_FILE, LOCK_FILE, LOG_DIR, MACHINE_ID_FILE, database_path, ensure_data_dir
from san_desktop.core.settings import SETTINGS_FILE
from san_desktop.db.backends.sqlite.driver import SqliteDriver, choose_driver
from san_desktop.db.backends.sqlite.engine import load_sqlite_vec
from san_desktop.db.migrate import known_revisions
from san_desktop.transfer.backup import (
    MANIFEST,
    BackupCancelledError,
    BackupSummary,
    ByteMeter,
    Cancelled,
    Progress,
    read_only_engine,
    refuse_server_library,
    schema_revision,
    summary_of,
    table_counts,
)
from san_desktop.transfer.backup_reader import (
    BackupDamagedError,
    BackupTooNewError,
    BackupZip,
    Member,
    NotABackupError,
    checked_members,
    copy_member,
    opened_backup,
    read_manifest,
)

__all__ = [
    "BackupDamagedError",
    "BackupTooNewError",
    "LibraryNotEmptyError",
    "NotABackupError",
    "NotEnoughRoomError",
    "restore_backup",
]

# rows a library opened once has with nothing in it (its schema, the app's sessions, jobs the window queued for
# itself): a folder whose database holds rows only in these holds no data to lose
HOUSEKEEPING_TABLES = frozenset(
    {"alembic_version", "app_sessions", "change_notices", "async_jobs", "job_attempts", "http_cache"}
)
# what file managers leave in any folder they show
_FOLDER_CLUTTER = frozenset({"desktop.ini", "Thumbs.db"})
_STAGING_PREFIX = ".san-restore-"
# free space kept beyond the backup's own bytes: the journal and first writes of the app that opens it
HEADROOM_BYTES = 64_000_000


class LibraryNotEmptyError(SanError):
    def __init__(self, data_dir: Path, detail: str) -> None:
        super().__init__(
            f"The data folder {data_dir} {detail}; a backup is restored only into an empty one, so nothing was "
            "changed. Choose an empty folder with --data-dir (or SAN_DATA_DIR)."
        )


class NotEnoughRoomError(SanError):
    def __init__(self, zip_path: Path, data_dir: Path, needed: int, free: int) -> None:
        super().__init__(
            f"Restoring {zip_path} needs {needed / 1e6:,.1f} MB free on the disk of {data_dir}, but only "
            f"{free / 1e6:,.1f} MB are free there; nothing was restored. Free some space, or choose a data folder "
            "on another disk with --data-dir."
        )


def _library_data(data_dir: Path, driver: SqliteDriver) -> str | None:
    """What in ``data_dir`` a restore must not replace or write through, in words; None when it holds no
    library with data and no symbolic link."""
    entries = sorted(data_dir.iterdir())
    for entry in entries:  # (the folder itself may be a link: it is the one the person chose)
        if entry.is_symlink():
            return (
                f"holds a symbolic link ({entry.name} → {os.readlink(entry)}), which a restore does not write through"
            )
    strangers = [
        entry.name
        for entry in entries
        if entry.name not in (LOG_DIR, LOCK_FILE, MACHINE_ID_FILE, SETTINGS_FILE, ARTIFACT_DIR, *_FOLDER_CLUTTER)
        and not entry.name.startswith((DATABASE_FILE, "san.backup-", "."))  # (.DS_Store, a killed restore's folder)
    ]
    if strangers:
        return f"holds files that are not a SAN Desktop library ({', '.join(strangers[:3])})"
    artifacts = data_dir / ARTIFACT_DIR
    if artifacts.exists() and any(path.is_file() for path in artifacts.rglob("*")):
        return "already holds a library (its artifact files)"
    database = database_path(data_dir)
    if not database.exists() or database.stat().st_size == 0:
        return None
    engine = _untouched_engine(database, driver)
    try:
        counts = table_counts(engine)
    except Exception as exc:  # whatever it is, it is not an empty library of ours
        return f"holds a {DATABASE_FILE} that cannot be read as an empty library ({exc.__class__.__name__})"
    finally:
        engine.dispose()
    filled = sorted(table for table, rows in counts.items() if rows and table not in HOUSEKEEPING_TABLES)
    return f"already holds a library with data ({', '.join(filled[:3])})" if filled else None


def _untouched_engine(database: Path, driver: SqliteDriver) -> sa.Engine:
    """An engine that reads ``database`` without writing a byte beside it: a read-only connection to a WAL
    database makes its ``-wal`` and ``-shm`` files and leaves them. Immutable when no ``-wal`` holds anything
    (the file is then the whole database); a ``-wal`` of a library that was not closed is read as it is."""
    wal = database.with_name(f"{database.name}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return read_only_engine(database, driver)
    uri = f"{database.as_uri()}?mode=ro&immutable=1"
    return sa.create_engine(
        "sqlite+pysqlite://", module=driver.module, creator=lambda: driver.module.connect(uri, uri=True)
    )


def _check_folder(data_dir: Path, driver: SqliteDriver) -> None:
    if data_dir.is_symlink() and not data_dir.exists():
        raise LibraryNotEmptyError(data_dir, "is a symbolic link to nothing")
    if not data_dir.exists():
        return
    if not data_dir.is_dir():
        raise LibraryNotEmptyError(data_dir, "is a file, not a folder")
    if (problem := _library_data(data_dir, driver)) is not None:
        raise LibraryNotEmptyError(data_dir, problem)


def _check_room(zip_path: Path, data_dir: Path, inflated: int) -> None:
    """Room on the disk for every byte the members say they hold (each is read no further than that)."""
    existing = next(folder for folder in (data_dir, *data_dir.parents) if folder.exists())
    needed, free = inflated + HEADROOM_BYTES, shutil.disk_usage(existing).free
    if free < needed:
        raise NotEnoughRoomError(zip_path, data_dir, needed, free)


def _extract(backup: BackupZip, members: list[Member], staging: Path, meter: ByteMeter) -> None:
    """Each member into a file of its own under ``staging`` (a folder this restore made): created, never
    opened if something is there already."""
    for member in members:
        target = staging / member.path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as writer:

            def write(data: bytes, writer: Any = writer) -> None:
                writer.write(data)
                meter.advance(len(data))

            copy_member(backup, member, write)


def _verify(backup: BackupZip, members: list[Member], meter: ByteMeter) -> None:
    """What a dry run reads: every member to its end (its CRC and length), written nowhere."""
    for member in members:
        copy_member(backup, member, lambda data: meter.advance(len(data)))


def _check_database(path: Path, manifest: dict[str, Any], zip_path: Path, driver: SqliteDriver) -> None:
    try:
        connection: Any = driver.module.connect(str(path))
        try:
            load_sqlite_vec(connection)  # its vector indexes are checked too
            verdict = [row[0] for row in connection.execute("PRAGMA integrity_check(20)")]
        finally:
            connection.close()
    except driver.module.DatabaseError as exc:
        raise BackupDamagedError(zip_path, f"{DATABASE_FILE}: {exc}") from exc
    if verdict != ["ok"]:
        problems = "; ".join(verdict)
        raise BackupDamagedError(zip_path, f"{DATABASE_FILE} fails SQLite's integrity check: {problems}")
    engine = read_only_engine(path, driver)
    try:
        revision, counts = schema_revision(engine), table_counts(engine)
    except Exception as exc:
        raise NotABackupError(zip_path, f"its {DATABASE_FILE} is not a SAN Desktop database: {exc}") from exc
    finally:
        engine.dispose()
    if revision not in known_revisions():
        raise BackupTooNewError(zip_path, f"its database is at schema revision {revision}")
    if revision != manifest["schema_revision"] or counts != manifest["counts"]:
        raise BackupDamagedError(zip_path, f"{DATABASE_FILE} does not hold what {MANIFEST} lists")


def _move_into_place(staging: Path, data_dir: Path) -> None:
    """Artifacts, settings, then the database (a library exists only once all of it is there). What an empty
    library left goes to the staging folder first, and comes back if a move fails."""
    replaced = staging / ".replaced"
    replaced.mkdir()
    done: list[tuple[Path, Path]] = []
    names = [ARTIFACT_DIR, SETTINGS_FILE, DATABASE_FILE]
    try:
        for name in [*names, f"{DATABASE_FILE}-wal", f"{DATABASE_FILE}-shm"]:
            restored = (staging / name).exists() or name.startswith(DATABASE_FILE)  # (the database's -wal too)
            if restored and (data_dir / name).exists():
                os.replace(data_dir / name, replaced / name)
                done.append((data_dir / name, replaced / name))
        for name in names:
            if (staging / name).exists():
                os.replace(staging / name, data_dir / name)
                done.append((staging / name, data_dir / name))
    except BaseException:  # (Ctrl-C too)
        for origin, moved in reversed(done):
            with contextlib.suppress(OSError):
                os.replace(moved, origin)
        raise


def restore_backup(
    zip_path: Path,
    data_dir: Path,
    *,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    driver: SqliteDriver | None = None,
    dry_run: bool = False,
) -> BackupSummary:
    """Restore the backup ``zip_path`` into ``data_dir``, which must hold no library with data; takes its
    instance lock (no window or runner may have it open). ``dry_run`` checks all a restore checks but the
    database's integrity (which needs it written) and writes nothing. Raises ``BackupCancelledError`` when
    ``cancelled`` says so, ``SanError`` subclasses saying why a backup is refused."""
    refuse_server_library(data_dir, "restored from a .zip")
    chosen = driver or choose_driver()
    with opened_backup(zip_path) as backup:
        manifest = read_manifest(backup)
        members, inflated = checked_members(backup, manifest)
        _check_folder(data_dir, chosen)  # before the lock: no lock file in a stranger's folder
        _check_room(zip_path, data_dir, inflated)
        meter = ByteMeter(sum(member.info.file_size for member in members), progress, cancelled)
        if cancelled is not None and cancelled():
            raise BackupCancelledError
        if dry_run:
            _verify(backup, members, meter)
        else:
            _restore(backup, members, manifest, data_dir, meter, cancelled, chosen)
    return summary_of(manifest, zip_path, data_dir, backup.size)


def _restore(
    backup: BackupZip,
    members: list[Member],
    manifest: dict[str, Any],
    data_dir: Path,
    meter: ByteMeter,
    cancelled: Cancelled | None,
    driver: SqliteDriver,
) -> None:
    ensure_data_dir(data_dir)
    with InstanceLock(data_dir):
        _check_folder(data_dir, driver)
        for left_over in data_dir.glob(f"{_STAGING_PREFIX}*"):  # of a restore killed half-way (we hold the lock)
            if left_over.is_dir() and not left_over.is_symlink():
                shutil.rmtree(left_over, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=data_dir))
        try:
            _extract(backup, members, staging, meter)
            _check_database(staging / DATABASE_FILE, manifest, backup.path, driver)
            if cancelled is not None and cancelled():
                raise BackupCancelledError
            _move_into_place(staging, data_dir)
        except OSError as exc:
            if is_storage_full(exc):
                raise StorageFullError(data_dir, "the backup was not restored") from exc
            where = f" ({exc.filename})" if exc.filename else ""
            raise SanError(
                f"Could not restore {backup.path} into {data_dir}: {exc.strerror or exc}{where}; nothing was restored."
            ) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
