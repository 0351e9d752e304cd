"""A full backup of a library in one zip (``san export all``): ``manifest.json`` first, then the database,
copied with SQLite's online backup API (a consistent snapshot, taken while the app may be open and writing),
``settings.json`` and every artifact file the copied database refers to. Never the logs, the lock file,
left-over temporary files or secrets (those live in the keyring, not in the data folder).

Restoring it is ``transfer.restore``; the format's rules (the manifest, which members may be in a backup)
are here, for both."""

from __future__ import annotations

import contextlib
import json
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import sqlalchemy as sa

from san_desktop import __version__
from san_desktop.artifacts.store import ARTIFACT_DIR, ArtifactStore
from san_desktop.core.errors import SanError, StorageFullError, is_storage_full
from san_desktop.core.paths import DATABASE_FILE, database_path
from san_desktop.core.settings import DATABASE_URL_ENV, SETTINGS_FILE, database_url, load_settings_checked
from san_desktop.core.timeutil import utcnow
from san_desktop.core.user_files import check_target, new_file
from san_desktop.db.backends import derived_table_names
from san_desktop.db.backends.sqlite.driver import SqliteDriver, choose_driver
from san_desktop.db.backends.sqlite.integrity import check_sqlite_header
from san_desktop.db.backends.sqlite.migrate import inspect_database

BACKUP_FORMAT = "san-desktop-backup"
BACKUP_VERSION = 1
MANIFEST = "manifest.json"
CHUNK = 1 << 20  # bytes copied between two progress reports and cancellation checks

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)
Cancelled = Callable[[], bool]


class BackupCancelledError(Exception):
    """The person cancelled: nothing was written (cancelling is not an error shown to them)."""


# what a summary line counts, in this order (the manifest has every table)
SHOWN_TABLES = (
    ("scraps", "scraps"),
    ("knowledge_cards", "cards"),
    ("daily_summaries", "TIL days"),
    ("recall_quizzes", "quizzes"),
    ("starred_repositories", "starred repositories"),
)


@dataclass(frozen=True)
class BackupSummary:
    """What a backup holds (read from its manifest): the same for the export that wrote it and the restore."""

    path: Path  # the zip
    data_dir: Path
    schema_revision: str
    app_version: str
    created_at: str
    counts: dict[str, int]
    files: int  # artifact files
    size_bytes: int  # of the zip
    missing_files: tuple[str, ...] = field(default=())  # referenced by the database but not on disk

    @property
    def scraps(self) -> int:
        return self.counts.get("scraps", 0)

    @property
    def summary(self) -> str:
        return f"Backed up {self.data_dir} to {self.path}: {self.described()}."

    def described(self) -> str:
        """ "1,234 scraps, 1,200 cards, 30 TIL days, 500 quizzes, 40 starred repositories, 31 files (2.1 MB)"."""
        shown = ", ".join(f"{self.counts.get(table, 0):,} {label}" for table, label in SHOWN_TABLES)
        return f"{shown}, {self.files:,} files ({self.size_bytes / 1_000_000:,.1f} MB)"


def member_path(name: str) -> PurePosixPath:
    """The data-folder path of a zip member, or ``ValueError`` for one that could land outside the folder
    (absolute, a drive, ``..``) or that a backup never holds (zip slip and strays are refused alike)."""
    if not name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ValueError(f"{name!r} is not a relative path")
    path = PurePosixPath(name)
    if any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError(f"{name!r} leaves its folder")
    if name in (MANIFEST, DATABASE_FILE, SETTINGS_FILE) or (path.parts[0] == ARTIFACT_DIR and len(path.parts) > 1):
        return path
    raise ValueError(f"{name!r} is not part of a SAN Desktop backup")


def library_tables(connection: sa.Connection) -> list[str]:
    """The app's own tables (not SQLite's, nor the search and vector indexes derived from them)."""
    names = connection.exec_driver_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).scalars()
    derived = derived_table_names(connection)
    return [name for name in names if name not in derived]


def read_only_engine(path: Path, driver: SqliteDriver) -> sa.Engine:
    """An engine that reads ``path`` as it is: no pragmas, no extension (``make_engine`` would turn the
    file to WAL mode)."""
    uri = f"{path.as_uri()}?mode=ro"
    return sa.create_engine(
        "sqlite+pysqlite://", module=driver.module, creator=lambda: driver.module.connect(uri, uri=True)
    )


def referenced_artifacts(engine: sa.Engine) -> list[str]:
    """Artifact keys the database refers to: what the orphan sweep keeps is what a backup holds."""
    from sqlalchemy.orm import Session

    from san_desktop.services.til import TilService

    with Session(engine) as session:
        return sorted(TilService.referenced(session))


def table_counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {
            table: int(connection.exec_driver_sql(f'SELECT count(*) FROM "{table}"').scalar_one())
            for table in library_tables(connection)
        }


def schema_revision(engine: sa.Engine) -> str:
    with engine.connect() as connection:
        return str(connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one())


def copy_database(source: Path, target: Path, driver: SqliteDriver) -> None:
    """A consistent copy with SQLite's online backup API, in one step: one read transaction, so a writer
    of the open app carries on meanwhile (WAL) and never restarts the copy. The copy is left in rollback
    journal mode, one self-contained file (the app turns it back to WAL when it opens it)."""
    reader: Any = driver.module.connect(f"{source.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        writer: Any = driver.module.connect(str(target))
        try:
            reader.backup(writer)
            writer.execute("PRAGMA journal_mode=DELETE")
        finally:
            writer.close()
    finally:
        reader.close()


def settings_text(data_dir: Path) -> str | None:
    """``settings.json`` as the app reads it: checked, so a user name or password someone typed into an
    address in it is left out (secrets belong in the keyring). None when there is none."""
    if not (data_dir / SETTINGS_FILE).exists():
        return None
    settings, _problems = load_settings_checked(data_dir)
    return json.dumps(settings.as_dict(), indent=2, sort_keys=True, allow_nan=False)


def _no_library(data_dir: Path) -> SanError:
    return SanError(f"There is no SAN Desktop library in {data_dir} to back up (no {DATABASE_FILE} there).")


def _check_library(data_dir: Path, driver: SqliteDriver) -> Path:
    path = database_path(data_dir)
    if not inspect_database(path, driver, check=False).exists or path.stat().st_size == 0:
        raise _no_library(data_dir)
    return path


class ByteMeter:
    """Bytes copied so far against the whole, reported (and the cancel asked about) after each chunk."""

    def __init__(self, total: int, progress: Progress | None, cancelled: Cancelled | None) -> None:
        self.done, self.total = 0, total
        self._progress, self._cancelled = progress, cancelled

    def advance(self, size: int) -> None:
        self.done += size
        if self._cancelled is not None and self._cancelled():
            raise BackupCancelledError
        if self._progress is not None:
            self._progress(self.done, self.total)


def _add_file(archive: zipfile.ZipFile, source: Path, name: str, meter: ByteMeter) -> None:
    """Stream ``source`` into the zip a chunk at a time (a large database never sits in memory)."""
    # its size up front (zip64 when it needs it); a file dated before 1980 is stored as of 1980
    info = zipfile.ZipInfo.from_file(source, name, strict_timestamps=False)
    info.compress_type = zipfile.ZIP_DEFLATED
    with source.open("rb") as reader, archive.open(info, "w") as writer:
        while chunk := reader.read(CHUNK):
            writer.write(chunk)
            meter.advance(len(chunk))


def _artifact_files(data_dir: Path, keys: list[str]) -> dict[str, Path]:
    """The files of ``keys`` that are there, by key (a key that would leave the artifacts folder is none)."""
    store = ArtifactStore(data_dir)
    files: dict[str, Path] = {}
    for key in keys:
        try:
            path = store.path(key)
        except ValueError:
            continue
        if path.is_file():
            files[key] = path
    return files


def refuse_server_library(data_dir: Path, what: str) -> None:
    """A backup .zip holds a SQLite library; a library on a server is copied with ``san db copy``."""
    try:
        url = database_url(data_dir)
    except ValueError:
        url = "(not usable)"
    if url:
        raise SanError(
            f"This library is on a PostgreSQL server ({DATABASE_URL_ENV} or database.url), so it cannot be {what} "
            "here. Copy it into a data folder of its own with `san db copy --from URL --into DIR` (or "
            "use the server's pg_dump), or unset the URL to work on the data folder's own library."
        )


def check_backup_target(zip_path: Path, *, overwrite: bool = False) -> bool:
    """Refuse a name without .zip, a link, a folder, a device or a pipe, and an existing file unless
    ``overwrite`` (``core.user_files.check_target``); whether a file is there to be replaced."""
    return check_target(
        zip_path, suffix=".zip", why="a backup is a zip archive", example="SAN backup.zip", overwrite=overwrite
    )


@dataclass(frozen=True)
class BackupPlan:
    """What ``san export all --dry-run`` found: every check passed, nothing written (not even the copy of the
    database that counting its rows would need)."""

    path: Path
    data_dir: Path
    database_bytes: int
    replaces: bool  # a file is there, and --overwrite was given
    dry_run: bool = True

    @property
    def summary(self) -> str:
        where = f"{self.path}, replacing it" if self.replaces else f"{self.path}, a new file"
        return (
            f"Would back up {self.data_dir} (a database of {self.database_bytes / 1_000_000:,.1f} MB and the files "
            f"it refers to) to {where}; nothing was written."
        )


def plan_export_all(data_dir: Path, zip_path: Path, *, overwrite: bool = False) -> BackupPlan:
    """``export_all``'s checks, and nothing written: a dry run. The database is not opened (a read-only
    connection to a library in WAL mode leaves its -wal and -shm files behind): its header is read."""
    refuse_server_library(data_dir, "backed up to a .zip")
    replaces = check_backup_target(zip_path, overwrite=overwrite)
    source = database_path(data_dir)
    if not source.is_file() or source.stat().st_size == 0:
        raise _no_library(data_dir)
    check_sqlite_header(source)
    return BackupPlan(zip_path, data_dir, source.stat().st_size, replaces)


def export_all(
    data_dir: Path,
    zip_path: Path,
    *,
    overwrite: bool = False,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    driver: SqliteDriver | None = None,
) -> BackupSummary:
    """Back up the library of ``data_dir`` into ``zip_path``: a new file, or with ``overwrite`` a regular file
    replaced once the new one is whole (never a link, a folder or a device). Needs no instance lock: the
    window may be open and writing. Raises ``BackupCancelledError`` when ``cancelled`` says so, ``SanError``
    for what is in the way, before anything is copied when it can."""
    refuse_server_library(data_dir, "backed up to a .zip")
    check_backup_target(zip_path, overwrite=overwrite)
    chosen = driver or choose_driver()
    source = _check_library(data_dir, chosen)
    if cancelled is not None and cancelled():
        raise BackupCancelledError
    with (
        _storage_full(zip_path, "the backup was not written"),
        new_file(zip_path, overwrite=overwrite, private=True) as temporary,  # the whole library
        tempfile.TemporaryDirectory(prefix=".san-export-", dir=zip_path.parent) as scratch,
    ):
        snapshot = Path(scratch) / DATABASE_FILE
        try:
            copy_database(source, snapshot, chosen)
        except chosen.module.Error as exc:
            if is_storage_full(exc):
                raise StorageFullError(zip_path.parent, "the database could not be copied") from exc
            raise
        engine = read_only_engine(snapshot, chosen)
        try:
            revision, counts, keys = schema_revision(engine), table_counts(engine), referenced_artifacts(engine)
        finally:
            engine.dispose()
        files = _artifact_files(data_dir, keys)
        missing = tuple(key for key in keys if key not in files)
        settings = settings_text(data_dir)
        manifest = {
            "format": BACKUP_FORMAT,
            "version": BACKUP_VERSION,
            "app_version": __version__,
            "schema_revision": revision,
            "created_at": utcnow().isoformat(),
            "counts": counts,
            "files": len(files),
            "missing_files": list(missing),
        }
        total = snapshot.stat().st_size + sum(path.stat().st_size for path in files.values())
        meter = ByteMeter(total, progress, cancelled)
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
            archive.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))
            _add_file(archive, snapshot, DATABASE_FILE, meter)
            if settings is not None:
                archive.writestr(SETTINGS_FILE, settings)
            for key, path in files.items():
                try:
                    _add_file(archive, path, f"{ARTIFACT_DIR}/{key}", meter)
                except FileNotFoundError:  # its row went (a TIL's draft parts, say) after the database was copied
                    raise SanError(
                        f"The file {path} was removed while the library was being backed up (the app is at work "
                        "on it). Run the backup again; nothing was written."
                    ) from None
        size = temporary.stat().st_size
    return summary_of(manifest, zip_path, data_dir, size)


@contextlib.contextmanager
def _storage_full(target: Path, detail: str) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        if is_storage_full(exc):
            raise StorageFullError(target.parent, detail) from exc
        raise


def summary_of(manifest: dict[str, Any], zip_path: Path, data_dir: Path, size: int) -> BackupSummary:
    return BackupSummary(
        path=zip_path,
        data_dir=data_dir,
        schema_revision=str(manifest["schema_revision"]),
        app_version=str(manifest["app_version"]),
        created_at=str(manifest["created_at"]),
        counts={str(table): int(rows) for table, rows in dict(manifest["counts"]).items()},
        files=int(manifest["files"]),
        size_bytes=size,
        missing_files=tuple(str(key) for key in manifest.get("missing_files", ())),
    )
