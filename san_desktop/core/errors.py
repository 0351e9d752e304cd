"""Expected failures, each carrying a sentence a user can act on.

Anything that is not a ``SanError`` is a bug: it is logged with its traceback and shown in a crash dialog.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from san_desktop.core.sqlite_codes import SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, sqlite_code


class KnownError(Exception):
    """An error of ours: its message is a sentence a person can act on, so it is recorded and shown by that
    sentence alone (``core.redact.error_message``); other exceptions are recorded with their type's name."""


class SanError(KnownError):
    """An expected failure with a message fit to show to the user as it is."""

    exit_code = 1


class DataDirectoryError(SanError):
    pass


class InstanceLockedError(SanError):
    exit_code = 3

    def __init__(self, data_dir: Path, holder: str | None) -> None:
        who = f" (process {holder})" if holder else ""
        super().__init__(
            f"SAN Desktop is already running on the data directory {data_dir}{who}. "
            "Switch to the open window, or close it before starting another one."
        )
        self.data_dir = data_dir
        self.holder = holder


class DatabaseError(SanError):
    exit_code = 4


class NotADatabaseError(DatabaseError):
    """``path``: a database file; a string: a database on a server (``db.backends.postgres.server.describe``)."""

    def __init__(self, path: Path | str, detail: str = "") -> None:
        extra = f" ({detail})" if detail else ""
        if isinstance(path, str):
            message = (
                f"The database {path} is not a SAN Desktop database{extra}. It was left untouched. "
                "Point SAN Desktop at an empty database (or one it made), then start it again."
            )
        else:
            message = (
                f"The file {path} is not a SAN Desktop database{extra}. It was left untouched. "
                "Move it away or restore it from a backup, then start SAN Desktop again."
            )
        super().__init__(message)
        self.path = path


class NoLibraryYetError(DatabaseError):
    """A command that only reads found no library where it looked: reading makes none (a file or a server's
    database stays as it was)."""

    def __init__(self, where: Path | str) -> None:
        super().__init__(
            f"There is no SAN Desktop library in {where} yet, so there is nothing to read; it was left as it is. "
            "SAN Desktop makes the library when it first starts, or when a command first writes (`san scrap add`)."
        )
        self.where = where


class LibraryNotUpgradedError(DatabaseError):
    """A command that only reads found a library at an older schema: reading upgrades nothing."""

    def __init__(self, where: Path | str, db_revision: str, app_head: str) -> None:
        super().__init__(
            f"The library in {where} is at schema revision {db_revision}, older than this version's {app_head}, "
            "and a command that only reads does not upgrade it (it was left as it is). Start SAN Desktop, or run a "
            "command that writes such as `san jobs sweep`, once to upgrade it; then read it."
        )
        self.where = where


class DatabaseTooNewError(DatabaseError):
    def __init__(self, path: Path | str, db_revision: str, app_head: str) -> None:
        elsewhere, unchanged = (
            ("another database", "It was not changed")
            if isinstance(path, str)
            else ("another data directory", "The file was not changed")
        )
        super().__init__(
            f"The database {path} is at schema revision {db_revision}, which this version of SAN Desktop "
            f"does not know (its newest revision is {app_head}). It was probably written by a newer "
            f"version: update SAN Desktop, or point it at {elsewhere}. {unchanged}."
        )
        self.path = path
        self.db_revision = db_revision
        self.app_head = app_head


class DatabaseServerError(DatabaseError):
    """The library's PostgreSQL server cannot be reached, refuses the login, or is out of room."""

    def __init__(self, where: str, problem: str, remedy: str, cause: str = "") -> None:
        said = f" ({cause})" if cause else ""
        super().__init__(f"The database {where} {problem}{said}. {remedy}")
        self.where = where
        self.cause = cause


class DatabaseUnreachableError(DatabaseServerError):
    """The library's server does not answer (down, restarting, or out of this machine's reach): a condition
    that passes, which the job runner waits out (``jobs.outage``)."""


class DatabaseLockedError(DatabaseError):
    def __init__(self, path: Path | str, *, by_this_app: bool = False) -> None:
        if by_this_app:
            message = (
                f"The database {path} stayed busy with another task of SAN Desktop for too long. "
                "Try again in a moment; if it keeps happening, restart SAN Desktop."
            )
        else:
            message = (
                f"The database {path} is locked by another program. Close whatever has it open "
                "(another SAN Desktop, a database browser) and try again."
            )
        super().__init__(message)
        self.path = path


class DatabaseDamagedError(DatabaseError):
    def __init__(self, path: Path, detail: str, backup: Path | None) -> None:
        if backup is not None:
            remedy = (
                f"Restore the latest backup: close SAN Desktop, move {path.name} (with any {path.name}-wal and "
                f"{path.name}-shm beside it) out of the folder, and copy {backup.name} to {path.name}."
            )
        else:
            remedy = (
                "There is no backup beside it. Keep a copy of the file, then try `sqlite3 "
                f"{path.name} .recover | sqlite3 recovered.db` to save what can be saved."
            )
        super().__init__(f"The database {path} is damaged ({detail}); SAN Desktop did not write to it. {remedy}")
        self.path = path
        self.backup = backup


class StorageFullError(SanError):
    """The disk is full (or read-only): nothing can be written until space is freed. Work that hits it
    waits and tries again; nothing already stored is lost."""

    def __init__(self, where: Path | str, detail: str = "") -> None:
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"Cannot write to {where}: the disk is full or read-only{extra}. Free some space (or make it "
            "writable) and try again; nothing already stored was lost."
        )


class SqliteDriverError(DatabaseError):
    pass


class KeyringUnavailableError(SanError):
    """A secret could not be stored (or removed): ``variables`` (``GH_TOKEN (or GITHUB_TOKEN)``) is what
    works instead."""

    def __init__(self, what: str, detail: str, variables: str, *, done: str = "stored") -> None:
        super().__init__(
            f"{what} was not {done}: no system keyring can keep it safely here ({detail}). Set {variables} "
            "in SAN Desktop's environment instead (read from there, never written to a file), or install "
            "and unlock a keyring service (GNOME Keyring, KWallet, macOS Keychain or Windows Credential "
            "Manager) and try again."
        )


# --- failures of work that may be retried -------------------------------------------------------
# Raised by adapters (the AI providers, the GitHub client) and processors; the job layer only
# classifies them. They live here so those adapters never import the job layer.

TARGET_NOT_FOUND = "Target data not found (Already deleted)"


class PermanentError(KnownError):
    """Retrying cannot help (bad input, 401/403/404, validation): fail at once."""


class TransientError(KnownError):
    """May succeed later (timeout, connection refused, 5xx): retry with backoff."""


class RateLimitedError(TransientError):
    """The service asked us to wait ``retry_after`` seconds; waiting does not spend an attempt."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, retry_after)


class CredentialsRejectedError(PermanentError):
    """The service refused the configured key (401, or a 403 that names the key): no job of its pool can
    succeed until the user changes it. A pool with a breaker pauses at once and its jobs wait, spending no
    attempt; elsewhere the job fails, as any permanent error does."""


class TargetNotFoundError(PermanentError):
    """What a job works on is gone (seed 000: deleted targets fail without retry)."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(TARGET_NOT_FOUND + (f": {detail}" if detail else ""))


_STORAGE_ERRNOS = {errno.ENOSPC, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)}
_LOW_SPACE_BYTES = 1 << 20


def storage_exhausted(where: Path) -> bool:
    """Whether the file system holding ``where`` is (nearly) full or mounted read-only."""
    try:
        info = os.statvfs(where if where.is_dir() else where.parent)
    except (OSError, AttributeError):  # gone, or no statvfs (Windows)
        return False
    return bool(info.f_flag & os.ST_RDONLY) or info.f_bavail * info.f_frsize < _LOW_SPACE_BYTES


def is_storage_full(exc: BaseException, where: Path | None = None) -> bool:
    """Whether ``exc`` (an OSError or a SQLite error, possibly wrapped) says the disk is full or read-only.
    SQLite reports a shared-memory file it cannot grow as a plain "disk I/O error": with ``where``, that
    counts when the file system there is indeed full."""
    if isinstance(exc, StorageFullError):
        return True
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        return True
    code = sqlite_code(exc)
    if code in (SQLITE_FULL, SQLITE_READONLY):
        return True
    return where is not None and code == SQLITE_IOERR and storage_exhausted(where)
