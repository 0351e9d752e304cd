"""Where `san import FILE.zip` reads and writes: it reads only a regular file (never a folder, a named pipe, a
device or a symbolic link), never writes through a symbolic link in the data folder, and its `--dry-run` checks
the whole backup while writing nothing at all."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.cli.main import main
from san_desktop.transfer.restore import BackupDamagedError, LibraryNotEmptyError, NotABackupError, restore_backup
from tests.support.backups import small_backup
from tests.support.devices import device_node
from tests.support.library import file_fingerprints

PRECIOUS = b"a file of the user's that no restore may touch"


@pytest.fixture
def backup(app: SanApp, tmp_path: Path) -> Path:
    return small_backup(app, tmp_path / "backup.zip")


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "target"


def _folder(_backup: Path, folder: Path) -> Path:
    (folder / "folder.zip").mkdir()
    return folder / "folder.zip"


def _named_pipe(_backup: Path, folder: Path) -> Path:
    os.mkfifo(folder / "pipe.zip")  # opening it to read would wait for a writer that never comes
    return folder / "pipe.zip"


def _device(_backup: Path, folder: Path) -> Path:
    return device_node(folder / "zero.zip", "zero")


def _symbolic_link(backup: Path, folder: Path) -> Path:
    (folder / "link.zip").symlink_to(backup)
    return folder / "link.zip"


NOT_REGULAR: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "folder": (_folder, "it is a folder, not a file"),
    "named pipe": (_named_pipe, "it is a pipe (FIFO), not a regular file"),
    "device": (_device, "it is a device, not a regular file"),
    "symbolic link": (_symbolic_link, "it is a symbolic link; name the file it points to"),
}


@pytest.mark.parametrize("kind", sorted(NOT_REGULAR))
def test_a_path_that_is_not_a_regular_file_is_refused(kind: str, backup: Path, tmp_path: Path, target: Path) -> None:
    make, reason = NOT_REGULAR[kind]
    path = make(backup, tmp_path)

    with pytest.raises(NotABackupError) as refused:
        restore_backup(path, target)

    assert str(refused.value).startswith(f"{path} is not a SAN Desktop backup ({reason}); nothing was restored.")
    assert not target.exists()


def test_the_command_refuses_a_symbolic_link_to_a_backup(
    backup: Path, tmp_path: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = _symbolic_link(backup, tmp_path)

    assert main(["--data-dir", str(target), "import", str(link)]) == 1

    stderr = capsys.readouterr().err
    assert "it is a symbolic link; name the file it points to" in " ".join(stderr.split())
    assert "Traceback" not in stderr
    assert not target.exists()


@pytest.mark.parametrize("name", ["san.lock", "logs", "artifacts", "san.db", "settings.json"])
def test_a_symbolic_link_in_the_data_folder_is_never_written_through(
    name: str, backup: Path, tmp_path: Path, target: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    pointed = outside / name
    if name in ("logs", "artifacts"):
        pointed.mkdir()
    else:
        pointed.write_bytes(b"" if name == "san.db" else PRECIOUS)  # (an empty san.db is an empty library)
    target.mkdir()
    (target / name).symlink_to(pointed)
    before = {path.name: path.read_bytes() for path in outside.iterdir() if path.is_file()}

    with pytest.raises(LibraryNotEmptyError, match=rf"holds a symbolic link \({name} → "):
        restore_backup(backup, target)

    assert {path.name: path.read_bytes() for path in outside.iterdir() if path.is_file()} == before
    assert not pointed.is_dir() or not any(pointed.iterdir())
    assert [entry.name for entry in target.iterdir()] == [name]
    assert (target / name).readlink() == pointed


def test_a_dry_run_checks_the_backup_and_writes_nothing(
    backup: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(target), "import", str(backup), "--dry-run"]) == 0

    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(f"Would restore {backup} into {target}: 30 scraps, ")
    assert "Nothing was written." in out
    assert not target.exists()


def test_a_dry_run_into_an_empty_library_leaves_its_files_as_they_were(
    backup: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_app(target, kind="cli", log_to_stderr=False):
        pass
    names = sorted(path.relative_to(target).as_posix() for path in target.rglob("*"))
    files = file_fingerprints(target)

    assert main(["--data-dir", str(target), "import", str(backup), "--dry-run", "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["counts"]["scraps"] == 30
    assert sorted(path.relative_to(target).as_posix() for path in target.rglob("*")) == names
    assert file_fingerprints(target) == files


def test_a_dry_run_reads_every_member(backup: Path, tmp_path: Path, target: Path) -> None:
    damaged = tmp_path / "damaged.zip"
    data = bytearray(backup.read_bytes())
    with zipfile.ZipFile(backup) as archive:
        info = archive.getinfo("san.db")
    middle = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data[middle : middle + 8] = bytes(byte ^ 0x5A for byte in data[middle : middle + 8])
    damaged.write_bytes(bytes(data))

    with pytest.raises(BackupDamagedError, match=r"The backup .* is damaged \(san\.db: "):
        restore_backup(damaged, target, dry_run=True)
    assert not target.exists()
