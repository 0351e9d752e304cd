"""File locks between processes; above all, one live SAN process (GUI or headless runner) per data
directory.

Recovery relies on it: work owned by any session other than the lock holder's belongs to a dead process.
The lock is an OS file lock, so it disappears with the process however it ends (even SIGKILL).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from san_desktop.core.errors import DataDirectoryError, InstanceLockedError
from san_desktop.core.paths import LOCK_FILE


class FileLock:
    """An exclusive OS lock on a file, shared by every process that opens the same path. The holder's
    pid is written into the file when there is room for it (it only explains who holds the lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def try_acquire(self) -> str | None:
        """Take the lock if it is free; otherwise return the holder's pid (or "" if unknown)."""
        handle = self._open()
        try:
            _lock_file(handle)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            return holder
        try:  # unbuffered, so a full disk fails here and not when the file is closed
            os.ftruncate(handle.fileno(), 0)
            os.write(handle.fileno(), str(os.getpid()).encode())  # opened for appending: at 0 after the truncate
        except OSError:
            pass  # a full disk: the lock is held all the same
        self._handle = handle
        return None

    def _open(self) -> IO[str]:
        """The lock file, opened to append without following a symbolic link (its pid would be written through
        it into whatever file it names) and refused unless it is a regular file."""
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            if self.path.is_symlink():
                raise DataDirectoryError(f"The lock file {self.path} is a symbolic link: remove it and start again.")
            descriptor = os.open(self.path, flags, 0o644)
        except DataDirectoryError:
            raise
        except OSError as exc:
            raise DataDirectoryError(f"Cannot open the lock file {self.path}: {exc.strerror or exc}.") from exc
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise DataDirectoryError(f"The lock file {self.path} is not a regular file: remove it and start again.")
        os.set_blocking(descriptor, True)
        return open(descriptor, "a+", encoding="utf-8")  # kept open while the lock is held

    def acquire_blocking(self, timeout: float, poll: float = 0.05) -> bool:
        """Wait up to ``timeout`` seconds for the lock; False if another process kept it."""
        deadline = time.monotonic() + timeout
        while self.try_acquire() is not None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll)
        return True

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            with contextlib.suppress(OSError):
                os.ftruncate(self._handle.fileno(), 0)
            _unlock_file(self._handle)
        finally:
            self._handle.close()
            self._handle = None


class InstanceLock(FileLock):
    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir / LOCK_FILE)
        self.data_dir = data_dir

    def acquire(self) -> InstanceLock:
        holder = self.try_acquire()
        if holder is not None:
            raise InstanceLockedError(self.data_dir, holder or None)
        return self

    def __enter__(self) -> InstanceLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock_file(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock_file(handle: IO[str]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock_file(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock_file(handle: IO[str]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
