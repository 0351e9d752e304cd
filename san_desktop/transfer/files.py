"""Writing an export's files: whole or not at all (a temporary file beside the target, then a rename), and
the failures a person can act on (a missing folder, a full disk, no permission) as ``SanError``."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from san_desktop.core.errors import SanError, StorageFullError, is_storage_full


class NothingToExportError(SanError):
    def __init__(self, what: str) -> None:
        super().__init__(f"Nothing to export: the library has no {what} yet.")


@contextmanager
def writing(target: Path, what: str) -> Iterator[None]:
    """OSError while writing ``target`` as the sentence a person reads."""
    try:
        yield
    except OSError as exc:
        if is_storage_full(exc):
            raise StorageFullError(target, f"{what} was not exported") from exc
        raise SanError(f"Cannot write {target}: {exc.strerror or exc}.") from exc


def replace_atomically(target: Path, write: Callable[[Path], object]) -> None:
    """``write`` a temporary file in ``target``'s folder, then rename it over ``target``: a reader (Anki,
    Obsidian, a sync client) never sees half a file, and a failure leaves the old one."""
    handle, name = tempfile.mkstemp(prefix=".san-", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temporary = Path(name)
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_bytes_atomically(target: Path, data: bytes) -> None:
    replace_atomically(target, lambda path: path.write_bytes(data))
