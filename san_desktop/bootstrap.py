"""Start-up shared by the GUI and the headless runner: data directory → logging → instance lock →
database (backed up and migrated) → app session. No Qt here."""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from san_desktop import __version__
from san_desktop.core.errors import NoLibraryYetError, SanError
from san_desktop.core.instance_lock import InstanceLock
from san_desktop.core.logging_setup import setup_logging
from san_desktop.core.paths import database_path, ensure_data_dir, resolve_data_dir
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.backends import library_url
from san_desktop.db.backends.sqlite.integrity import IntegrityCheck
from san_desktop.db.database import Database, open_database, open_server_database

log = logging.getLogger(__name__)


@dataclass
class Backend:
    data_dir: Path
    lock: InstanceLock | None  # None: a command that works beside a running app (no session either)
    db: Database
    session_id: str | None
    log_file: Path
    reading: bool = False  # opened for a command that only reads: nothing of the library is written
    # (reading where there is no library yet) the folder of the empty library that stands in for it
    stand_in: Path | None = None
    _closed: bool = False

    def close(self) -> None:
        """End the app session and let go of the database and the lock (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.session_id is not None:
                from san_desktop.services.app_sessions import end_session

                end_session(self.db, self.session_id)
        except Exception as exc:
            away = self.db.unreachable(exc)
            if away is None:
                log.exception("Could not record the end of app session %s", self.session_id)
            else:  # (no traceback helps: the next start on this machine ends it)
                log.warning("Could not record the end of app session %s: %s", self.session_id, away)
        finally:
            self.db.dispose()
            if self.stand_in is not None:
                shutil.rmtree(self.stand_in, ignore_errors=True)
            if self.lock is not None:
                self.lock.release()
            log.info("SAN Desktop session %s closed", self.session_id)

    def require_session(self) -> str:
        """The app session of a backend that holds the instance lock (the runner needs one)."""
        assert self.session_id is not None, "opened without the instance lock"
        return self.session_id


def _start_session(db: Database, kind: str) -> str:
    # loaded here, not with the module: a command without the instance lock records no session
    from san_desktop.services.app_sessions import start_session

    return start_session(db, kind)


def _open_library(directory: Path, integrity: IntegrityCheck | None, *, reading: bool = False) -> Database:
    """The SQLite file in the data folder, or the PostgreSQL database that ``database.url`` (or
    $SAN_DATABASE_URL) names; with ``reading``, as it is (neither made nor upgraded)."""
    try:
        url = library_url(directory)
    except ValueError as exc:
        raise SanError(f"The library's URL ({DATABASE_URL_ENV}, else database.url) is not usable: {exc}") from None
    if not url:
        return open_database(database_path(directory), checked=integrity, migrated=not reading)
    from san_desktop.services.secrets import database_password

    return open_server_database(url, directory, password=database_password(), migrated=not reading)


def start_backend(
    data_dir: str | Path | None,
    *,
    kind: str,
    log_to_stderr: bool = True,
    lock: bool = True,
    verbose: bool = False,
    integrity: IntegrityCheck | None = None,
    reading: bool = False,
) -> Backend:
    """Raises ``SanError`` subclasses with a message for the user when something is in the way. With
    ``lock``, takes the data directory's instance lock and records an app session. The terminal gets
    warnings and errors (with ``verbose``, the log file's INFO lines too). ``integrity``: the database's
    check, started earlier (``start_integrity_check``); its verdict comes before any write. ``reading``: for a
    command that only reads (without ``lock``): the library is opened as it is, and nothing of it is written;
    where there is none yet (no file, an empty server database), an empty library made in a temporary folder
    stands in for it, so the command reads what an empty library holds and the place stays as it was."""
    assert not (reading and lock), "a reading command records no app session"
    directory = ensure_data_dir(resolve_data_dir(data_dir))
    stderr_level = logging.INFO if verbose else logging.WARNING
    log_file = setup_logging(directory, stderr=log_to_stderr, stderr_level=stderr_level)
    instance = InstanceLock(directory).acquire() if lock else None
    stand_in = None
    try:
        db = _open_library(directory, integrity, reading=reading)
    except NoLibraryYetError as exc:  # (only when reading)
        log.info("%s It is read as an empty library.", exc)
        stand_in = Path(tempfile.mkdtemp(prefix="san-empty-library-"))
        db = open_database(database_path(stand_in))  # read as the library would be: empty; nothing made there
    except BaseException:
        if instance is not None:
            instance.release()
        raise
    try:
        session_id = _start_session(db, kind) if lock else None
    except BaseException:
        db.dispose()
        if instance is not None:
            instance.release()
        raise
    log.info(
        "SAN Desktop %s started (%s, session %s, data %s, database %s on %s)",
        __version__,
        kind,
        session_id,
        directory,
        db.where,
        db.runs_on,
    )
    return Backend(directory, instance, db, session_id, log_file, reading, stand_in)
