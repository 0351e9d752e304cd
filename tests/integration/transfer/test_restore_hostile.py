"""Hostile zips given to `san import FILE.zip`: names file systems refuse, a file and a folder of one name,
compression this version cannot read, encryption, a manifest nested or inflated beyond reason, members that
inflate a thousand times or lie about their size, too many members, too little free space. Each is refused with
a sentence (never a traceback), before anything is written, in bounded memory."""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.errors import SanError
from san_desktop.transfer.restore import BackupDamagedError, restore_backup
from tests.support.backups import patched, restored_nothing, rewritten, small_backup, with_many_members, with_zeros

MEBIBYTE = 1 << 20
Hostile = Callable[[Path, Path], Path]  # (a real backup, a folder to write in) → a hostile copy of it


@pytest.fixture
def backup(app: SanApp, tmp_path: Path) -> Path:
    return small_backup(app, tmp_path / "backup.zip")


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "target"


def _long_name(backup: Path, folder: Path) -> Path:
    return rewritten(backup, folder / "long.zip", extra=((f"artifacts/til/{'n' * 300}.md", b"a note"),))


def _file_then_folder(backup: Path, folder: Path) -> Path:
    both = (("artifacts/til/a", b"a file"), ("artifacts/til/a/b", b"in a folder of that name"))
    return rewritten(backup, folder / "both.zip", extra=both)


def _folder_then_file(backup: Path, folder: Path) -> Path:
    both = (("artifacts/til/a/b", b"in a folder"), ("artifacts/til/a", b"a file of the folder's name"))
    return rewritten(backup, folder / "both.zip", extra=both)


def _zstandard(backup: Path, folder: Path) -> Path:
    zipped = rewritten(backup, folder / "zstd.zip", extra=(("artifacts/til/z.md", b"compressed otherwise"),))
    return patched(zipped, "artifacts/til/z.md", method=93)  # what Python 3.14 writes as ZIP_ZSTANDARD


def _encrypted(backup: Path, folder: Path) -> Path:
    return patched(rewritten(backup, folder / "encrypted.zip"), "san.db", flags=0x1)


def _deep_manifest(backup: Path, folder: Path) -> Path:
    def deep(name: str, data: bytes) -> bytes:
        return b"[" * 100_000 + b"]" * 100_000 if name == "manifest.json" else data

    return rewritten(backup, folder / "deep.zip", deep)


def _manifest_bomb(backup: Path, folder: Path) -> Path:
    return with_zeros(backup, folder / "manifest-bomb.zip", {}, manifest_padding=200)


def _member_bomb(backup: Path, folder: Path) -> Path:
    return with_zeros(backup, folder / "member-bomb.zip", {"artifacts/til/zeros.md": 256})


def _members_bomb(backup: Path, folder: Path) -> Path:  # each under what one member may inflate to, not together
    return with_zeros(backup, folder / "members-bomb.zip", {f"artifacts/til/{n}.md": 48 for n in range(3)})


def _declared_huge(backup: Path, folder: Path) -> Path:
    return patched(rewritten(backup, folder / "huge.zip"), "san.db", size=4_000_000_000)


def _too_many(backup: Path, folder: Path) -> Path:
    return with_many_members(backup, folder / "many.zip", 100_000)


def _manifest_without_app_version(backup: Path, folder: Path) -> Path:
    def without(name: str, data: bytes) -> bytes:
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        del manifest["app_version"]
        return json.dumps(manifest).encode()

    return rewritten(backup, folder / "no-version.zip", without)


class Case(NamedTuple):
    make: Hostile
    sentence: str  # a part of what the person is told


HOSTILE = {
    "a 300-byte member name": Case(_long_name, "longer than a file name may be (303 bytes; at most 255)"),
    "a file, then a folder of its name": Case(_file_then_folder, "'artifacts/til/a' is both a file and a folder"),
    "a folder, then a file of its name": Case(_folder_then_file, "'artifacts/til/a' is both a file and a folder"),
    "zstd compression": Case(_zstandard, "'artifacts/til/z.md' is compressed with method 93 (Zstandard)"),
    "an encrypted member": Case(_encrypted, "'san.db' is encrypted"),
    "a manifest nested 100,000 deep": Case(_deep_manifest, "manifest.json nests more than 16 levels deep"),
    "a manifest inflating to 200 MB": Case(_manifest_bomb, "manifest.json is larger than 4 MB"),
    "a member inflating a thousand times": Case(_member_bomb, "'artifacts/til/zeros.md' would inflate"),
    "members inflating a thousand times": Case(_members_bomb, "its members would inflate to"),
    "a member declaring 4 GB": Case(_declared_huge, "'san.db' would inflate"),
    "a hundred thousand members": Case(_too_many, "it has more than 100,000 members"),
    "a manifest without its app version": Case(_manifest_without_app_version, "misses the app version"),
}


def _peak_memory(call: Callable[[], object]) -> tuple[object, int]:
    tracemalloc.start()
    try:
        return call(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_backup_gets_a_sentence_and_leaves_no_trace(
    case: str, backup: Path, tmp_path: Path, target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = HOSTILE[case].make(backup, tmp_path)

    code, peak = _peak_memory(lambda: main(["--data-dir", str(target), "import", str(hostile)]))

    stderr = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in stderr
    message = " ".join(stderr.split())
    assert message.startswith(f"san: {hostile} is not a SAN Desktop backup (")
    assert HOSTILE[case].sentence in message
    assert "nothing was restored" in message
    assert not target.exists()  # refused before the folder was made
    assert peak < 40 * MEBIBYTE


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_backup_is_refused_before_a_byte_is_extracted(
    case: str, backup: Path, tmp_path: Path, target: Path
) -> None:
    hostile = HOSTILE[case].make(backup, tmp_path)
    extracted: list[int] = []

    with pytest.raises(SanError):
        restore_backup(hostile, target, progress=lambda done, _total: extracted.append(done))

    assert extracted == []


def test_a_member_shorter_than_its_header_says_is_refused(backup: Path, tmp_path: Path, target: Path) -> None:
    with_info = rewritten(backup, tmp_path / "short.zip")
    size = _member_size(with_info, "san.db")
    patched(with_info, "san.db", size=size + 4096)  # zipfile stops at the end of the data and its CRC holds

    with pytest.raises(
        BackupDamagedError, match=rf"'san\.db' holds {size:,} bytes where its header says {size + 4096:,}"
    ):
        restore_backup(with_info, target)
    assert restored_nothing(target)


def test_a_member_longer_than_its_header_says_stops_at_the_size_it_says(
    backup: Path, tmp_path: Path, target: Path
) -> None:
    # kept from before: zipfile reads no more than the header says, and the CRC of what it read fails
    lying = rewritten(backup, tmp_path / "long.zip")
    declared = _member_size(lying, "san.db") // 2
    patched(lying, "san.db", size=declared)
    extracted: list[int] = []

    with pytest.raises(BackupDamagedError, match=r"san\.db"):
        restore_backup(lying, target, progress=lambda done, _total: extracted.append(done))
    assert max(extracted, default=0) <= declared
    assert restored_nothing(target)


def _member_size(zip_path: Path, name: str) -> int:
    with zipfile.ZipFile(zip_path) as archive:
        return archive.getinfo(name).file_size


def test_a_disk_without_room_for_the_backup_is_told_before_writing(
    backup: Path, target: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = shutil.disk_usage(backup.parent)
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: real._replace(free=10 * MEBIBYTE))

    assert main(["--data-dir", str(target), "import", str(backup)]) == 1

    message = " ".join(capsys.readouterr().err.split())
    assert f"Restoring {backup} needs" in message
    assert f"MB free on the disk of {target}, but only 10.5 MB are free there" in message
    assert "nothing was restored" in message
    assert not target.exists()
