"""Backups for the restore tests: a small real one, and copies of it rewritten member by member."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

from san_desktop.app import SanApp
from san_desktop.transfer.backup import export_all
from tests.support.library import bulk_library

Edit = Callable[[str, bytes], bytes | None]  # a member's name and bytes → its new bytes, or None to drop it


def small_backup(app: SanApp, zip_path: Path, scraps: int = 30) -> Path:
    bulk_library(app, scraps)
    export_all(app.data_dir, zip_path)
    return zip_path


def rewritten(source: Path, target: Path, edit: Edit | None = None, extra: tuple[tuple[str, bytes], ...] = ()) -> Path:
    """``source`` member by member into ``target`` (valid CRCs), changed by ``edit``, with ``extra`` members
    added at the end under any name (even one ``ZipFile.extractall`` would sanitise)."""
    with zipfile.ZipFile(source) as reader, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as writer:
        for info in reader.infolist():
            data = reader.read(info)
            changed = edit(info.filename, data) if edit is not None else data
            if changed is not None:
                writer.writestr(info.filename, changed)
        for name, data in extra:
            writer.writestr(zipfile.ZipInfo(name), data)
    return target


def restored_nothing(data_dir: Path) -> bool:
    """No library and no half of one in ``data_dir`` (the lock file and the logs folder may be there)."""
    if not data_dir.exists():
        return True
    return {entry.name for entry in data_dir.iterdir()} <= {"san.lock", "logs"}
