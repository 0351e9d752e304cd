"""Backups for the restore tests: a small real one, copies of it rewritten member by member, and the hostile
zips a restore must refuse (headers patched by hand, members that inflate far beyond their size)."""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

from san_desktop.app import SanApp
from san_desktop.transfer.backup import export_all
from tests.support.library import bulk_library

Edit = Callable[[str, bytes], bytes | None]  # a member's name and bytes → its new bytes, or None to drop it

_LOCAL, _CENTRAL = b"PK\x03\x04", b"PK\x01\x02"
_MEBIBYTE = b"\0" * (1 << 20)


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


def with_zeros(source: Path, target: Path, zeros: dict[str, int], manifest_padding: int = 0) -> Path:
    """``source`` with members of ``zeros`` (name → MiB of zero bytes, streamed: the test never holds them)
    and its manifest preceded by ``manifest_padding`` MiB of spaces (still valid JSON); a few hundred KB."""
    with zipfile.ZipFile(source) as reader, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as writer:
        for info in reader.infolist():
            data = reader.read(info)
            if info.filename == "manifest.json" and manifest_padding:
                with writer.open(zipfile.ZipInfo(info.filename), "w", force_zip64=True) as member:
                    for _ in range(manifest_padding):
                        member.write(b" " * (1 << 20))
                    member.write(data)
            else:
                writer.writestr(info.filename, data)
        for name, mebibytes in zeros.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with writer.open(info, "w", force_zip64=True) as member:
                for _ in range(mebibytes):
                    member.write(_MEBIBYTE)
    return target


def patched(path: Path, name: str, *, method: int | None = None, flags: int = 0, size: int | None = None) -> Path:
    """Rewrite the headers of the member ``name`` in place, in its local header and in the central
    directory alike: its compression method, flag bits or'ed in, its uncompressed size (a lie)."""
    with zipfile.ZipFile(path) as archive:
        offset = archive.getinfo(name).header_offset
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    central = data.find(_CENTRAL)
    while central >= 0 and data[central + 46 : central + 46 + len(encoded)] != encoded:
        central = data.find(_CENTRAL, central + 1)
    assert data[offset : offset + 4] == _LOCAL, f"no local header of {name} in {path}"
    assert central >= 0, f"{name} is not in the central directory of {path}"
    # (flag bits, method, uncompressed size) at these offsets of a local header and of a central entry
    for start, (flag_at, method_at, size_at) in ((offset, (6, 8, 22)), (central, (8, 10, 24))):
        (old_flags,) = struct.unpack_from("<H", data, start + flag_at)
        struct.pack_into("<H", data, start + flag_at, old_flags | flags)
        if method is not None:
            struct.pack_into("<H", data, start + method_at, method)
        if size is not None:
            struct.pack_into("<L", data, start + size_at, size)
    path.write_bytes(bytes(data))
    return path


def restored_nothing(data_dir: Path) -> bool:
    """No library and no half of one in ``data_dir`` (the lock file and the logs folder may be there)."""
    if not data_dir.exists():
        return True
    return {entry.name for entry in data_dir.iterdir()} <= {"san.lock", "logs"}


def with_many_members(source: Path, target: Path, count: int) -> Path:
    """``source`` with ``count`` empty stored members added, their headers written by hand: a hundred thousand
    of them in a fraction of the time ``zipfile`` takes."""
    data = source.read_bytes()
    with zipfile.ZipFile(source) as archive:
        entries, start = len(archive.infolist()), archive.start_dir
    end = data.rindex(b"PK\x05\x06")
    local, central = bytearray(data[:start]), bytearray(data[start:end])
    for number in range(count):
        name = f"artifacts/til/{number}.md".encode()
        # no flags, stored, 1980-01-01, empty (CRC 0, sizes 0), no extra field or comment
        central += struct.pack(
            "<4s6H3L5H2L", _CENTRAL, 20, 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0, 0, 0, 0, 0, len(local)
        )
        local += struct.pack("<4s5H3L2H", _LOCAL, 20, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0) + name
        central += name
    entries = min(entries + count, 0xFFFF)  # (what zipfile counts is the directory itself)
    end_record = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, len(central), len(local), 0)
    target.write_bytes(bytes(local + central + end_record))
    return target
