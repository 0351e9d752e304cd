"""A full backup (``san export all``) and its restore (``san import``) of a library of 2,000 and 20,000 scraps
with their cards, vectors, quizzes and a TIL, against copying the database file alone (the floor)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from bench.common import Row, temporary_data_dir
from san_desktop.app import open_app
from san_desktop.core.paths import database_path
from san_desktop.transfer.backup import export_all
from san_desktop.transfer.restore import restore_backup
from tests.support.library import bulk_library, made_by_jobs


def _library(directory: Path, scraps: int) -> Path:
    data_dir = directory / "library"
    with open_app(data_dir, kind="gui", log_to_stderr=False) as app:
        made_by_jobs(app)
        bulk_library(app, scraps)
    return data_dir


def bench_backup(scraps: int) -> list[Row]:
    with temporary_data_dir() as directory:
        data_dir = _library(directory, scraps)
        database = database_path(data_dir)
        started = time.perf_counter()
        shutil.copyfile(database, directory / "plain-copy.db")
        floor = time.perf_counter() - started
        started = time.perf_counter()
        summary = export_all(data_dir, directory / "backup.zip")
        exported = time.perf_counter() - started
        started = time.perf_counter()
        restore_backup(directory / "backup.zip", directory / "restored")
        restored = time.perf_counter() - started
        size = f"zip {summary.size_bytes / 1e6:.1f} MB of a {database.stat().st_size / 1e6:.1f} MB database"
        return [
            Row(f"backup: export, {scraps:,} scraps", exported * 1000, "ms", size, floor * 1000, "file copy"),
            Row(
                f"backup: restore, {scraps:,} scraps",
                restored * 1000,
                "ms",
                "checked (CRC, integrity_check, counts)",
                floor * 1000,
                "file copy",
            ),
        ]


def run_all() -> list[Row]:
    return bench_backup(2_000) + bench_backup(20_000)


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
