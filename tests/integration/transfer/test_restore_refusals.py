"""What `san import FILE.zip` refuses, each with a sentence saying why, leaving the target as it was: a folder
that holds a library with data, a file that is not a backup, a member that would land outside the folder, a
backup of a newer schema, a damaged member or database; and a cancel half-way."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.cli.main import main
from san_desktop.core.paths import database_path
from san_desktop.db.migrate import head_revision
from san_desktop.transfer.backup import BackupCancelledError, export_all
from san_desktop.transfer.restore import (
    BackupDamagedError,
    BackupTooNewError,
    LibraryNotEmptyError,
    NotABackupError,
    restore_backup,
)
from tests.support.backups import restored_nothing, rewritten, small_backup
from tests.support.library import bulk_library, table_fingerprints

FIRST, SECOND = "ix_scraps_created_at", "uq_scraps_source_type_content_hash"  # two indexes of the scraps


@pytest.fixture
def backup(app: SanApp, tmp_path: Path) -> Path:
    return small_backup(app, tmp_path / "backup.zip")


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "target"


def _import(target: Path, zip_path: Path) -> int:
    return main(["--data-dir", str(target), "import", str(zip_path)])


def test_a_folder_that_holds_a_library_with_data_is_left_alone(
    app: SanApp, data_dir: Path, backup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = table_fingerprints(database_path(data_dir))

    assert _import(data_dir, backup) == 1

    message = " ".join(capsys.readouterr().err.split())
    assert "already holds a library with data" in message
    assert "Choose an empty folder with --data-dir" in message
    assert table_fingerprints(database_path(data_dir)) == before


def test_a_library_opened_once_but_empty_is_replaced(backup: Path, target: Path) -> None:
    with open_app(target, kind="cli", log_to_stderr=False):
        pass
    (target / ".DS_Store").write_bytes(b"what a file manager leaves")

    summary = restore_backup(backup, target)

    with open_app(target, kind="cli", log_to_stderr=False) as restored:
        assert len(restored.scraps.list_scraps(limit=100)) == summary.scraps == 30


def test_an_empty_library_open_in_the_app_is_not_restored_into(
    app: SanApp, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_app(tmp_path / "elsewhere", kind="cli", log_to_stderr=False) as other:
        bulk_library(other, 5)
    export_all(tmp_path / "elsewhere", tmp_path / "elsewhere.zip")

    assert _import(data_dir, tmp_path / "elsewhere.zip") == 3

    assert "already running on the data directory" in capsys.readouterr().err
    assert app.scraps.list_scraps() == []


def test_a_folder_of_other_files_is_refused(backup: Path, target: Path) -> None:
    target.mkdir()
    (target / "thesis.docx").write_bytes(b"not ours")

    with pytest.raises(LibraryNotEmptyError, match="not a SAN Desktop library"):
        restore_backup(backup, target)
    assert sorted(entry.name for entry in target.iterdir()) == ["thesis.docx"]


def test_a_file_that_is_not_a_zip_is_refused(tmp_path: Path, target: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.zip"
    notes.write_text("just some notes", encoding="utf-8")

    assert _import(target, notes) == 1

    assert "is not a SAN Desktop backup" in capsys.readouterr().err
    assert restored_nothing(target)


def test_a_zip_without_a_manifest_is_refused(tmp_path: Path, target: Path) -> None:
    other = tmp_path / "photos.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("holiday.jpg", b"\xff\xd8\xff")

    with pytest.raises(NotABackupError, match=r"first member is not manifest\.json"):
        restore_backup(other, target)
    assert restored_nothing(target)


def test_a_manifest_of_another_format_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    def other_format(name: str, data: bytes) -> bytes:
        return (
            json.dumps({**json.loads(data), "format": "someone-elses-backup"}).encode()
            if name == "manifest.json"
            else data
        )

    with pytest.raises(NotABackupError, match="does not name the format"):
        restore_backup(rewritten(backup, tmp_path / "other.zip", other_format), target)
    assert restored_nothing(target)


@pytest.mark.parametrize(
    "name", ["../escaped.txt", "artifacts/../../escaped.txt", "/tmp/escaped.txt", "C:/escaped.txt", "..\\escaped.txt"]
)
def test_a_member_that_would_land_outside_the_folder_is_refused(
    backup: Path, tmp_path: Path, target: Path, name: str
) -> None:
    slipping = rewritten(backup, tmp_path / "slip.zip", extra=((name, b"written outside"),))

    with pytest.raises(NotABackupError, match=r"escaped\.txt"):
        restore_backup(slipping, target)
    assert not (tmp_path / "escaped.txt").exists()
    assert restored_nothing(target)


def test_a_member_no_backup_holds_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    stray = rewritten(backup, tmp_path / "stray.zip", extra=(("san.lock", b"123"),))

    with pytest.raises(NotABackupError, match="not part of a SAN Desktop backup"):
        restore_backup(stray, target)
    assert restored_nothing(target)


def test_a_backup_of_a_newer_schema_is_refused(
    backup: Path, tmp_path: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def newer(name: str, data: bytes) -> bytes:
        return json.dumps({**json.loads(data), "schema_revision": "9999"}).encode() if name == "manifest.json" else data

    assert _import(target, rewritten(backup, tmp_path / "newer.zip", newer)) == 4

    message = " ".join(capsys.readouterr().err.split())
    assert "made by a newer version of SAN Desktop" in message
    assert "schema revision 9999" in message
    assert f"up to {head_revision()}" in message
    assert "Update SAN Desktop" in message
    assert restored_nothing(target)


def _with_database(edit_database: str | Callable[[sqlite3.Connection], None], tmp_path: Path) -> object:
    """An edit that runs ``edit_database`` (SQL, or a function of a connection) on the backup's san.db."""

    def edit(name: str, data: bytes) -> bytes:
        if name != "san.db":
            return data
        copy = tmp_path / "edited.db"
        copy.write_bytes(data)
        conn = sqlite3.connect(copy)
        if callable(edit_database):
            edit_database(conn)
        else:
            conn.execute(edit_database)
        conn.commit()
        conn.close()
        return copy.read_bytes()

    return edit


def test_a_database_of_a_newer_schema_is_refused_whatever_the_manifest_says(
    backup: Path, tmp_path: Path, target: Path
) -> None:
    newer = _with_database("UPDATE alembic_version SET version_num = '9999'", tmp_path)

    with pytest.raises(BackupTooNewError, match="schema revision 9999"):
        restore_backup(rewritten(backup, tmp_path / "newer.zip", newer), target)  # type: ignore[arg-type]
    assert restored_nothing(target)


def test_a_database_that_is_not_ours_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    def someone_elses(name: str, data: bytes) -> bytes:
        if name != "san.db":
            return data
        other = tmp_path / "other.db"
        conn = sqlite3.connect(other)
        conn.execute("CREATE TABLE recipes (name TEXT)")
        conn.commit()
        conn.close()
        return other.read_bytes()

    with pytest.raises(NotABackupError, match=r"its san\.db is not a SAN Desktop database"):
        restore_backup(rewritten(backup, tmp_path / "recipes.zip", someone_elses), target)
    assert restored_nothing(target)


def test_a_database_other_than_the_manifest_lists_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    fewer = _with_database("DELETE FROM recall_quiz_reviews", tmp_path)

    with pytest.raises(BackupDamagedError, match=r"does not hold what manifest\.json lists"):
        restore_backup(rewritten(backup, tmp_path / "fewer.zip", fewer), target)  # type: ignore[arg-type]
    assert restored_nothing(target)


def test_a_member_whose_bytes_changed_fails_its_crc(backup: Path, tmp_path: Path, target: Path) -> None:
    damaged = tmp_path / "damaged.zip"
    data = bytearray(backup.read_bytes())
    with zipfile.ZipFile(backup) as archive:
        info = archive.getinfo("san.db")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    middle = start + info.compress_size // 2
    data[middle : middle + 8] = bytes(byte ^ 0x5A for byte in data[middle : middle + 8])
    damaged.write_bytes(bytes(data))

    with pytest.raises(BackupDamagedError, match=r"san\.db"):
        restore_backup(damaged, target)
    assert restored_nothing(target)


def test_a_database_whose_index_disagrees_with_its_table_fails_the_integrity_check(
    backup: Path, tmp_path: Path, target: Path
) -> None:
    # two indexes of the scraps swap their pages: each page is sound, the entries are not the table's (only a
    # full integrity check compares them)
    def swap(conn: sqlite3.Connection) -> None:
        pages = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE tbl_name = 'scraps'"))
        conn.execute("PRAGMA writable_schema = 1")
        for one, other in ((FIRST, SECOND), (SECOND, FIRST)):
            conn.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = ?", (pages[other], one))

    index_out_of_step = _with_database(swap, tmp_path)

    with pytest.raises(BackupDamagedError, match="fails SQLite's integrity check"):
        restore_backup(rewritten(backup, tmp_path / "out-of-step.zip", index_out_of_step), target)  # type: ignore[arg-type]
    assert restored_nothing(target)


def test_a_database_with_torn_pages_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    def torn(name: str, data: bytes) -> bytes:
        if name != "san.db":
            return data
        page = int.from_bytes(data[16:18], "big")
        broken = bytearray(data)
        for number in range(2, len(data) // page, 3):  # scribble over every third page's header
            broken[number * page : number * page + 12] = b"\x0d" + b"\xff" * 11
        return bytes(broken)

    with pytest.raises(BackupDamagedError, match=r"san\.db: database disk image is malformed"):
        restore_backup(rewritten(backup, tmp_path / "torn.zip", torn), target)
    assert restored_nothing(target)


def test_a_cancelled_restore_leaves_nothing(backup: Path, target: Path) -> None:
    progress: list[int] = []

    with pytest.raises(BackupCancelledError):
        restore_backup(
            backup, target, progress=lambda done, _total: progress.append(done), cancelled=lambda: bool(progress)
        )
    assert len(progress) == 1
    assert restored_nothing(target)


def test_what_a_killed_restore_left_is_cleared_by_the_next(backup: Path, target: Path) -> None:
    left_over = target / ".san-restore-k1ll3d"
    (left_over / "artifacts").mkdir(parents=True)
    (left_over / "san.db").write_bytes(b"half of a database")

    restore_backup(backup, target)

    assert not left_over.exists()
    assert (target / "san.db").exists()
