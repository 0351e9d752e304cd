"""Writing an export's files: the failures a person can act on (a missing folder, a full disk, no
permission) as ``SanError``. How a file is written (whole, never replacing one unasked, never through a link)
is ``core.user_files``, which imports use too."""

from __future__ import annotations

from collections.abc import Iterator
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
