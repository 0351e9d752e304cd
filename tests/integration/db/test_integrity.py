"""The integrity check started early (the window's entry point runs it while its modules import): its
verdict stands in for migrate's own check only for the very file it read, and damage is still refused
before anything writes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from san_desktop.core.errors import DatabaseDamagedError
from san_desktop.db.backends.sqlite import migrate as migrate_module
from san_desktop.db.backends.sqlite.engine import choose_driver
from san_desktop.db.backends.sqlite.integrity import IntegrityCheck, start_integrity_check
from san_desktop.db.backends.sqlite.migrate import migrate
from san_desktop.db.migrate import head_revision
from tests.support.db import raw_connection


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sound(path: Path) -> None:
    """A database at head with enough rows that the middle of the file is table data."""
    migrate(path, choose_driver())
    with raw_connection(path) as conn:
        for n in range(400):
            conn.execute(
                "INSERT INTO scraps (id, source_type, content, content_hash, created_at) VALUES (?, 'TEXT', ?, ?, ?)",
                (f"id-{n}", "words " * 200, f"hash-{n}", "2026-01-01 00:00:00.000000"),
            )
    with raw_connection(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _damage(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(os.urandom(16384))


def test_damage_found_by_the_early_check_is_refused_with_its_message_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    _sound(path)
    _damage(path)
    before = _digest(path)
    check = IntegrityCheck.start(path, choose_driver())
    with pytest.raises(DatabaseDamagedError, match="is damaged"):
        migrate(path, choose_driver(), checked=check)
    assert _digest(path) == before


def test_a_sound_database_is_not_checked_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "san.db"
    _sound(path)
    check = IntegrityCheck.start(path, choose_driver())
    assert check.passed(path, choose_driver())

    def checked_again(*_args: object) -> None:
        raise AssertionError("checked a second time")

    monkeypatch.setattr(migrate_module, "check_integrity", checked_again)
    assert migrate(path, choose_driver(), checked=check).head == head_revision()


def test_a_check_that_found_no_file_does_not_stand_in_for_one(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    check = IntegrityCheck.start(path, choose_driver())
    assert not check.passed(path, choose_driver())  # nothing was there
    _sound(path)  # made meanwhile (another process), and damaged
    _damage(path)
    with pytest.raises(DatabaseDamagedError, match="is damaged"):
        migrate(path, choose_driver(), checked=check)


def test_a_check_of_another_file_says_nothing_about_this_one(tmp_path: Path) -> None:
    damaged, other = tmp_path / "a" / "san.db", tmp_path / "b" / "san.db"
    damaged.parent.mkdir()
    other.parent.mkdir()
    _sound(damaged)
    _damage(damaged)
    _sound(other)
    check = IntegrityCheck.start(damaged, choose_driver())
    assert not check.passed(other, choose_driver())  # not raised: that verdict is the other file's
    with pytest.raises(DatabaseDamagedError):
        check.passed(damaged, choose_driver())


def test_the_entry_points_check_reads_the_database_start_backend_opens(tmp_path: Path) -> None:
    check = start_integrity_check(tmp_path)
    assert check is not None
    assert check.path == tmp_path.resolve() / "san.db"
