"""`san export all` while the library is in use: a consistent copy while another connection writes, no partial
zip when it fails or is cancelled, what is missing said rather than fatal; and an older backup restored and
migrated when opened."""

from __future__ import annotations

import errno
import threading
import zipfile
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.cli.main import main
from san_desktop.core.errors import SanError, StorageFullError
from san_desktop.core.ids import new_id
from san_desktop.core.paths import database_path
from san_desktop.core.text import content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.sqlite.driver import choose_driver
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.db.migrate import _revision_chain, head_revision
from san_desktop.transfer.backup import BackupCancelledError, export_all
from san_desktop.transfer.restore import restore_backup
from tests.support.db import migrate_to
from tests.support.library import bulk_library, made_by_jobs

WAIT = 30  # seconds a test waits for the writer thread before it calls the writer stuck


class PairWriter(threading.Thread):
    """Another connection (another program, as far as SQLite knows) committing a scrap and its card in each
    transaction, for as long as the test runs; ``more(n)`` waits until n more pairs are committed."""

    def __init__(self, database: Path) -> None:
        super().__init__(daemon=True)
        self.database = database
        self.committed = 0
        self.stop = threading.Event()
        self._changed = threading.Condition()
        self.failure: BaseException | None = None

    def run(self) -> None:
        conn = choose_driver().module.connect(str(self.database), timeout=30, isolation_level=None)
        try:
            while not self.stop.is_set():
                scrap_id, now = new_id(), db_time(utcnow())
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
                    "VALUES (?, 'TEXT', ?, ?, ?)",
                    (scrap_id, f"written meanwhile {scrap_id}", content_hash(scrap_id), now),
                )
                conn.execute(
                    "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
                    "VALUES (?, ?, 'meanwhile', 'meanwhile', ?, ?)",
                    (new_id(), scrap_id, now, now),
                )
                conn.execute("COMMIT")
                with self._changed:
                    self.committed += 1
                    self._changed.notify_all()
        except BaseException as exc:
            self.failure = exc
            with self._changed:
                self._changed.notify_all()
        finally:
            conn.close()

    def more(self, count: int) -> int:
        with self._changed:
            goal = self.committed + count
            assert self._changed.wait_for(lambda: self.committed >= goal or self.failure is not None, WAIT)
            assert self.failure is None, self.failure
            return self.committed


def test_a_backup_taken_while_another_connection_writes_is_one_consistent_moment(
    app: SanApp, data_dir: Path, tmp_path: Path
) -> None:
    bulk_library(app, 2_000)
    writer = PairWriter(database_path(data_dir))
    writer.start()
    try:
        before = writer.more(5)
        after: list[int] = []

        def on_progress(_done: int, _total: int) -> None:
            if not after:  # the database is copied: whatever commits now is after the backup's moment
                after.append(writer.more(20))

        summary = export_all(data_dir, tmp_path / "backup.zip", progress=on_progress)
        while_writing = writer.more(5)
    finally:
        writer.stop.set()
        writer.join(WAIT)
    restored = restore_backup(tmp_path / "backup.zip", tmp_path / "restored")  # integrity-checked

    meanwhile = summary.counts["scraps"] - 2_000
    assert summary.counts["knowledge_cards"] - 2_000 == meanwhile  # each pair whole, or not at all
    assert before <= meanwhile < after[0] < while_writing
    assert restored.counts == summary.counts


def test_a_cancelled_export_leaves_no_zip_and_the_earlier_one_as_it_was(
    app: SanApp, data_dir: Path, tmp_path: Path
) -> None:
    bulk_library(app, 2_000)
    folder = tmp_path / "out"
    folder.mkdir()
    earlier = folder / "backup.zip"
    earlier.write_bytes(b"last week's backup")
    reports: list[int] = []

    with pytest.raises(BackupCancelledError):
        export_all(
            data_dir,
            earlier,
            overwrite=True,
            progress=lambda done, _total: reports.append(done),
            cancelled=lambda: bool(reports),
        )

    assert len(reports) == 1
    assert [entry.name for entry in folder.iterdir()] == ["backup.zip"]
    assert earlier.read_bytes() == b"last week's backup"


def test_a_failed_export_leaves_no_zip(app: SanApp, data_dir: Path, tmp_path: Path) -> None:
    bulk_library(app, 200)
    folder = tmp_path / "out"
    folder.mkdir()

    def disk_full(_done: int, _total: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(StorageFullError, match="the backup was not written"):
        export_all(data_dir, folder / "backup.zip", progress=disk_full)
    assert list(folder.iterdir()) == []


def test_a_file_removed_after_the_database_was_copied_fails_the_export_cleanly(
    app: SanApp, data_dir: Path, tmp_path: Path
) -> None:
    made_by_jobs(app)
    folder = tmp_path / "out"
    folder.mkdir()
    files = sorted((data_dir / ARTIFACT_DIR).rglob("*.md"))

    def the_app_removes_a_file(_done: int, _total: int) -> None:  # as a TIL run does with parts it is done with
        files[-1].unlink(missing_ok=True)

    with pytest.raises(SanError, match="was removed while the library was being backed up"):
        export_all(data_dir, folder / "backup.zip", progress=the_app_removes_a_file)
    assert list(folder.iterdir()) == []


def test_a_folder_without_a_library_is_no_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()

    assert main(["--data-dir", str(tmp_path / "empty"), "export", "all", str(tmp_path / "backup.zip")]) == 1

    assert "There is no SAN Desktop library in" in capsys.readouterr().err
    assert not (tmp_path / "backup.zip").exists()


def test_a_file_already_missing_is_named_and_the_rest_backed_up(
    app: SanApp, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made_by_jobs(app)
    files = sorted((data_dir / ARTIFACT_DIR).rglob("*.md"))
    gone = files[0].relative_to(data_dir / ARTIFACT_DIR).as_posix()
    files[0].unlink()

    assert main(["--data-dir", str(data_dir), "export", "all", str(tmp_path / "backup.zip")]) == 0

    assert gone in capsys.readouterr().err
    with zipfile.ZipFile(tmp_path / "backup.zip") as archive:
        names = archive.namelist()
    assert f"{ARTIFACT_DIR}/{gone}" not in names
    assert restore_backup(tmp_path / "backup.zip", tmp_path / "restored").missing_files == (gone,)


def test_a_backup_of_an_older_schema_is_restored_then_migrated_when_opened(tmp_path: Path) -> None:
    older = _revision_chain()[-3]
    source, target = tmp_path / "old-library", tmp_path / "restored"
    source.mkdir()
    migrate_to(database_path(source), older)

    summary = export_all(source, tmp_path / "old.zip")
    restore_backup(tmp_path / "old.zip", target)

    assert summary.schema_revision == older
    with open_app(target, kind="cli", log_to_stderr=False) as restored:
        assert restored.about().upgraded_from == older
        assert restored.about().schema_revision == head_revision()
