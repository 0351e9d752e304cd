"""Restoring a full backup (``san import FILE.zip``) into a data folder that holds no library with data.

Everything is checked before anything is in place: the zip is ours (its manifest first), no member can land
outside the folder, the schema is one this version knows (an older one is migrated when the library is
opened, as always), each member's CRC, then SQLite's ``PRAGMA integrity_check`` and the manifest's row counts
on the extracted database. It is extracted into a temporary folder inside the target and moved into place
only when whole, the database last; a failure or a cancel leaves the folder as it was."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.core.errors import DatabaseError, SanError, StorageFullError, is_storage_full
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.core.paths import DATABASE_FILE, LOCK_FILE, LOG_DIR, MACHINE_ID_FILE, database_path, ensure_data_dir
from san_desktop.core.settings import SETTINGS_FILE
from san_desktop.db.driver import SqliteDriver, choose_driver
from san_desktop.db.engine import load_sqlite_vec
from san_desktop.db.migrate import head_revision, known_revisions
from san_desktop.transfer.backup import (
    BACKUP_FORMAT,
    BACKUP_VERSION,
    CHUNK,
    MANIFEST,
    BackupCancelledError,
    BackupSummary,
    ByteMeter,
    Cancelled,
    Progress,
    member_path,
    read_only_engine,
    refuse_server_library,
    schema_revision,
    summary_of,
    table_counts,
)

# rows a library opened once has with nothing in it (its schema, the app's sessions, jobs the window queued for
# itself): a folder whose database holds rows only in these holds no data to lose
HOUSEKEEPING_TABLES = frozenset(
    {"alembic_version", "app_sessions", "change_notices", "async_jobs", "job_attempts", "http_cache"}
)
# what file managers leave in any folder they show
_FOLDER_CLUTTER = frozenset({"desktop.ini", "Thumbs.db"})
_STAGING_PREFIX = ".san-restore-"

Members = list[tuple[zipfile.ZipInfo, Path]]  # what to extract, each with its path in the data folder


class NotABackupError(SanError):
    def __init__(self, zip_path: Path, detail: str) -> None:
        super().__init__(
            f"{zip_path} is not a SAN Desktop backup ({detail}); nothing was restored. "
            "Choose a file made by `san export all`."
        )


class BackupDamagedError(SanError):
    def __init__(self, zip_path: Path, detail: str) -> None:
        super().__init__(f"The backup {zip_path} is damaged ({detail}); nothing was restored. Use another copy of it.")


class BackupTooNewError(DatabaseError):
    def __init__(self, zip_path: Path, what: str) -> None:
        super().__init__(
            f"The backup {zip_path} was made by a newer version of SAN Desktop ({what}; this version knows "
            f"schema revisions up to {head_revision()}). Update SAN Desktop to restore it; nothing was restored."
        )


class LibraryNotEmptyError(SanError):
    def __init__(self, data_dir: Path, detail: str) -> None:
        super().__init__(
            f"The data folder {data_dir} {detail}; a backup is restored only into an empty one, so nothing was "
            "changed. Choose an empty folder with --data-dir (or SAN_DATA_DIR)."
        )


def read_manifest(archive: zipfile.ZipFile, zip_path: Path) -> dict[str, Any]:
    members = archive.infolist()
    if not members or members[0].filename != MANIFEST:
        raise NotABackupError(zip_path, f"its first member is not {MANIFEST}")
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except (ValueError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise NotABackupError(zip_path, f"{MANIFEST} cannot be read: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        raise NotABackupError(zip_path, f"{MANIFEST} does not name the format {BACKUP_FORMAT}")
    version = manifest.get("version")
    if not isinstance(version, int) or version < 1:
        raise NotABackupError(zip_path, f"{MANIFEST} has no format version")
    if version > BACKUP_VERSION:
        raise BackupTooNewError(zip_path, f"backup format version {version}")
    revision = manifest.get("schema_revision")
    if not isinstance(revision, str) or not isinstance(manifest.get("counts"), dict):
        raise NotABackupError(zip_path, f"{MANIFEST} misses the schema revision or the row counts")
    if revision not in known_revisions():
        raise BackupTooNewError(zip_path, f"its database is at schema revision {revision}")
    return manifest


def checked_members(archive: zipfile.ZipFile, zip_path: Path) -> Members:
    """Each member to extract with its path relative to the data folder; the whole zip is refused for one
    member that could land outside it (zip slip) or that is no part of a backup."""
    seen: set[str] = set()
    chosen: list[tuple[zipfile.ZipInfo, Path]] = []
    for info in archive.infolist():
        try:
            relative = member_path(info.filename)
        except ValueError as exc:
            raise NotABackupError(zip_path, f"the member {exc}") from None
        if info.filename in seen:
            raise NotABackupError(zip_path, f"{info.filename!r} is in it twice")
        seen.add(info.filename)
        if info.filename != MANIFEST and not info.is_dir():
            chosen.append((info, Path(*relative.parts)))
    if not any(path == Path(DATABASE_FILE) for _info, path in chosen):
        raise NotABackupError(zip_path, f"it holds no {DATABASE_FILE}")
    return chosen


def _library_data(data_dir: Path, driver: SqliteDriver) -> str | None:
    """What in ``data_dir`` a restore must not replace, in words; None when it holds no library with data."""
    strangers = sorted(
        entry.name
        for entry in data_dir.iterdir()
        if entry.name not in (LOG_DIR, LOCK_FILE, MACHINE_ID_FILE, SETTINGS_FILE, ARTIFACT_DIR, *_FOLDER_CLUTTER)
        and not entry.name.startswith((DATABASE_FILE, "san.backup-", "."))  # (.DS_Store, a killed restore's folder)
    )
    if strangers:
        return f"holds files that are not a SAN Desktop library ({', '.join(strangers[:3])})"
    artifacts = data_dir / ARTIFACT_DIR
    if artifacts.exists() and any(path.is_file() for path in artifacts.rglob("*")):
        return "already holds a library (its artifact files)"
    database = database_path(data_dir)
    if not database.exists() or database.stat().st_size == 0:
        return None
    engine = read_only_engine(database, driver)
    try:
        counts = table_counts(engine)
    except Exception as exc:  # whatever it is, it is not an empty library of ours
        return f"holds a {DATABASE_FILE} that cannot be read as an empty library ({exc.__class__.__name__})"
    finally:
        engine.dispose()
    filled = sorted(table for table, rows in counts.items() if rows and table not in HOUSEKEEPING_TABLES)
    return f"already holds a library with data ({', '.join(filled[:3])})" if filled else None


def _extract(archive: zipfile.ZipFile, members: Members, staging: Path, zip_path: Path, meter: ByteMeter) -> None:
    for info, relative in members:
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(info) as reader, target.open("wb") as writer:
                while chunk := reader.read(CHUNK):  # the CRC is checked as the last chunk is read
                    writer.write(chunk)
                    meter.advance(len(chunk))
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise BackupDamagedError(zip_path, f"{info.filename}: {exc}") from exc


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
) -> BackupSummary:
    """Restore the backup ``zip_path`` into ``data_dir``, which must hold no library with data; takes its
    instance lock (no window or runner may have it open). Raises ``BackupCancelledError`` when
    ``cancelled`` says so, ``SanError`` subclasses saying why a backup is refused."""
    refuse_server_library(data_dir, "restored from a .zip")
    chosen = driver or choose_driver()
    try:
        archive = zipfile.ZipFile(zip_path)
    except FileNotFoundError:
        raise SanError(f"No such file: {zip_path}.") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise NotABackupError(zip_path, f"not a readable zip file: {exc}") from exc
    with archive:
        manifest = read_manifest(archive, zip_path)
        members = checked_members(archive, zip_path)
        data_dir.mkdir(parents=True, exist_ok=True)
        if (problem := _library_data(data_dir, chosen)) is not None:  # before the lock: no lock file in a stranger
            raise LibraryNotEmptyError(data_dir, problem)
        ensure_data_dir(data_dir)
        with InstanceLock(data_dir):
            if (problem := _library_data(data_dir, chosen)) is not None:
                raise LibraryNotEmptyError(data_dir, problem)
            for left_over in data_dir.glob(f"{_STAGING_PREFIX}*"):  # of a restore killed half-way (we hold the lock)
                shutil.rmtree(left_over, ignore_errors=True)
            staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=data_dir))
            try:
                meter = ByteMeter(sum(info.file_size for info, _path in members), progress, cancelled)
                if cancelled is not None and cancelled():
                    raise BackupCancelledError
                _extract(archive, members, staging, zip_path, meter)
                _check_database(staging / DATABASE_FILE, manifest, zip_path, chosen)
                files = sum(1 for _info, path in members if path.parts[0] == ARTIFACT_DIR)
                if files != manifest.get("files"):
                    raise BackupDamagedError(zip_path, f"it holds {files} artifact files, {MANIFEST} says otherwise")
                if cancelled is not None and cancelled():
                    raise BackupCancelledError
                _move_into_place(staging, data_dir)
            except OSError as exc:
                if is_storage_full(exc):
                    raise StorageFullError(data_dir, "the backup was not restored") from exc
                raise
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return summary_of(manifest, zip_path, data_dir, zip_path.stat().st_size)
