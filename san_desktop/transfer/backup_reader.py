"""What a restore reads from a backup zip, and how far it trusts it: the file is a regular one, its manifest is
small and shallow and says all a backup says, every member could be written on any file system (names, a file
and a folder of one name), is stored or deflated and not encrypted, and none inflates beyond reason. All of it
is decided from the zip's directory before a byte is written; the bytes themselves are then read with a running
count against what their headers say.

The bounds, and why:

- ``manifest.json``: 4 MB (the manifest of a library with thousands of missing files takes a few hundred KB), at
  most 16 levels deep (it has 2), measured before it is parsed.
- members: 100,000 (a TIL file or two a day for a hundred years, with the database and settings), and their
  list in the zip 64 MB, counted before ``zipfile`` makes an object of each; a name's part at most 255 bytes and
  its path 1,024 (what file systems allow, with room for the data folder's own path).
- sizes: 64 GB in all (ten times a library of 100,000 captured pages with their cards, search index and
  vectors), and at most 100 times the zip's size beyond the first 64 MB (SAN Desktop's own backups inflate 2 to
  40 times; zeros inflate a thousand times), for each member and for all of them; then the disk's free space."""

from __future__ import annotations

import contextlib
import json
import os
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.core.errors import DatabaseError, SanError
from san_desktop.core.paths import DATABASE_FILE
from san_desktop.db.migrate import head_revision, known_revisions
from san_desktop.transfer.backup import BACKUP_FORMAT, BACKUP_VERSION, CHUNK, MANIFEST, member_path
from san_desktop.transfer.zip_guard import (
    UnsafeZipError,
    check_directory,
    check_member_format,
    json_depth,
    open_regular_file,
    read_member,
    shown_name,
)

MAX_MANIFEST_BYTES = 4_000_000
MAX_MANIFEST_DEPTH = 16
MAX_MEMBERS = 100_000
MAX_DIRECTORY_BYTES = 64_000_000
MAX_NAME_PART_BYTES = 255
MAX_NAME_BYTES = 1_024
MAX_TOTAL_BYTES = 64_000_000_000
MAX_INFLATION = 100
INFLATION_GRACE_BYTES = 64_000_000  # inflated this far, anything goes (a new library's database is mostly zeros)

# what the manifest must hold besides its format and version, with the type of each
_MANIFEST_FIELDS = (
    ("schema_revision", str, "the schema revision"),
    ("app_version", str, "the app version"),
    ("created_at", str, "the time it was made"),
    ("counts", dict, "the row counts"),
    ("files", int, "the number of files"),
)


class NotABackupError(SanError):
    def __init__(self, zip_path: Path, detail: str) -> None:
        super().__init__(
            f"{zip_path} is not a SAN Desktop backup ({detail}); nothing was restored. "
            "Choose a file made by `san export all`."
        )


class BackupDamagedError(SanError):
    def __init__(self, zip_path: Path, detail: str) -> None:
        super().__init__(f"The backup {zip_path} is damaged ({detail}); nothing was restored. Use another copy of it.")


class BackupTooNewError(DatabaseError):
    def __init__(self, zip_path: Path, what: str) -> None:
        super().__init__(
            f"The backup {zip_path} was made by a newer version of SAN Desktop ({what}; this version knows "
            f"schema revisions up to {head_revision()}). Update SAN Desktop to restore it; nothing was restored."
        )


@dataclass(frozen=True)
class Member:
    info: zipfile.ZipInfo
    path: Path  # where it goes, relative to the data folder


@dataclass(frozen=True)
class BackupZip:
    path: Path
    archive: zipfile.ZipFile
    size: int  # of the zip file, as opened


@contextlib.contextmanager
def opened_backup(zip_path: Path) -> Iterator[BackupZip]:
    """``zip_path`` opened as a zip when it is a regular file whose list of members is within bounds."""
    try:
        file = open_regular_file(zip_path)
    except FileNotFoundError:
        raise SanError(f"No such file: {zip_path}.") from None
    except UnsafeZipError as exc:
        raise NotABackupError(zip_path, str(exc)) from None
    with file:
        try:
            check_directory(file, MAX_MEMBERS, MAX_DIRECTORY_BYTES)
            archive = zipfile.ZipFile(file)
        except UnsafeZipError as exc:
            raise NotABackupError(zip_path, str(exc)) from None
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise NotABackupError(zip_path, f"not a readable zip file: {exc}") from exc
        with archive:
            yield BackupZip(zip_path, archive, os.fstat(file.fileno()).st_size)


def read_manifest(backup: BackupZip) -> dict[str, Any]:
    return _checked_manifest(parsed_manifest(backup), backup.path)


def parsed_manifest(backup: BackupZip) -> object:
    """The zip's first member, ``manifest.json``, parsed within its bounds (not yet checked as a manifest)."""
    zip_path, members = backup.path, backup.archive.infolist()
    if not members or members[0].filename != MANIFEST:
        raise NotABackupError(zip_path, f"its first member is not {MANIFEST}")
    info = members[0]
    if info.file_size > MAX_MANIFEST_BYTES:
        raise NotABackupError(zip_path, f"{MANIFEST} is larger than {MAX_MANIFEST_BYTES // 1_000_000} MB")
    data = bytearray()
    try:
        check_member_format(info)
        read_member(backup.archive, info, data.extend, MAX_MANIFEST_BYTES, CHUNK)
        if json_depth(data) > MAX_MANIFEST_DEPTH:
            raise UnsafeZipError(f"{MANIFEST} nests more than {MAX_MANIFEST_DEPTH} levels deep")
        manifest = json.loads(data)
    except UnsafeZipError as exc:
        raise NotABackupError(zip_path, str(exc)) from None
    except (ValueError, RecursionError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise NotABackupError(zip_path, f"{MANIFEST} cannot be read: {exc}") from exc
    return manifest


def _checked_manifest(manifest: object, zip_path: Path) -> dict[str, Any]:
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        raise NotABackupError(zip_path, f"{MANIFEST} does not name the format {BACKUP_FORMAT}")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise NotABackupError(zip_path, f"{MANIFEST} has no format version")
    if version > BACKUP_VERSION:
        raise BackupTooNewError(zip_path, f"backup format version {version}")
    for key, kind, words in _MANIFEST_FIELDS:
        value = manifest.get(key)
        if not isinstance(value, kind) or (kind is int and not _is_count(value)):
            raise NotABackupError(zip_path, f"{MANIFEST} misses {words}")
    if manifest["schema_revision"] not in known_revisions():
        raise BackupTooNewError(zip_path, f"its database is at schema revision {manifest['schema_revision']}")
    counts, missing = manifest["counts"], manifest.get("missing_files", [])
    if not all(isinstance(table, str) and _is_count(rows) for table, rows in counts.items()):
        raise NotABackupError(zip_path, f"{MANIFEST} has row counts that are not counts")
    if not isinstance(missing, list) or not all(isinstance(key, str) for key in missing):
        raise NotABackupError(zip_path, f"{MANIFEST} lists missing files that are not names")
    return manifest


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def checked_members(backup: BackupZip, manifest: dict[str, Any]) -> tuple[list[Member], int]:
    """Each member to write with its path in the data folder, and how many bytes all of them inflate to. The
    whole zip is refused for one member that could land outside the folder (zip slip), is no part of a backup,
    could not be written on some file system, or is not what the manifest says."""
    zip_path, infos = backup.path, backup.archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise NotABackupError(zip_path, f"it has more than {MAX_MEMBERS:,} members")
    chosen: list[Member] = []
    seen: dict[str, str] = {}  # each name as a file system that ignores case and Unicode forms sees it
    for info in infos:
        try:
            relative = member_path(info.filename)
            _check_name(info.filename, relative.parts)
            check_member_format(info)
        except UnsafeZipError as exc:
            raise NotABackupError(zip_path, str(exc)) from None
        except ValueError as exc:
            raise NotABackupError(zip_path, f"the member {exc}") from None
        folded = _folded(info.filename)
        if folded in seen:
            twice = (
                "is in it twice" if seen[folded] == info.filename else f"and {seen[folded]!r} are one file on Windows"
            )
            raise NotABackupError(zip_path, f"{shown_name(info.filename)} {twice}")
        seen[folded] = info.filename
        _check_inflation(zip_path, shown_name(info.filename), info.file_size, max(info.compress_size, 1))
        if info.filename != MANIFEST:
            chosen.append(Member(info, Path(*relative.parts)))
    for member in chosen:  # a file and a folder of one name: the second could not be written
        for parent in list(member.path.parents)[:-1]:
            if _folded(parent.as_posix()) in seen:
                raise NotABackupError(zip_path, f"{shown_name(parent.as_posix())} is both a file and a folder")
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        raise NotABackupError(
            zip_path, f"its members would inflate to {total / 1e9:,.1f} GB, more than a library holds"
        )
    _check_inflation(zip_path, "its members", total, backup.size)
    if not any(member.path == Path(DATABASE_FILE) for member in chosen):
        raise NotABackupError(zip_path, f"it holds no {DATABASE_FILE}")
    files = sum(1 for member in chosen if member.path.parts[0] == ARTIFACT_DIR)
    if files != manifest["files"]:
        raise BackupDamagedError(zip_path, f"it holds {files} artifact files, {MANIFEST} says {manifest['files']}")
    return chosen, total


def _check_name(name: str, parts: tuple[str, ...]) -> None:
    longest = max(len(part.encode("utf-8", "surrogateescape")) for part in parts)
    if longest > MAX_NAME_PART_BYTES:
        raise UnsafeZipError(
            f"the member name {shown_name(name)} is longer than a file name may be ({longest:,} bytes; at most "
            f"{MAX_NAME_PART_BYTES})"
        )
    if (length := len(name.encode("utf-8", "surrogateescape"))) > MAX_NAME_BYTES:
        raise UnsafeZipError(
            f"the member name {shown_name(name)} is longer than a path may be ({length:,} bytes; at most "
            f"{MAX_NAME_BYTES:,})"
        )


def _folded(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def _check_inflation(zip_path: Path, what: str, inflated: int, compressed: int) -> None:
    if inflated > max(INFLATION_GRACE_BYTES, MAX_INFLATION * compressed):
        raise NotABackupError(
            zip_path,
            f"{what} would inflate to {inflated / 1e6:,.1f} MB from {compressed / 1e6:,.1f} MB, more than "
            f"{MAX_INFLATION} times",
        )


def copy_member(backup: BackupZip, member: Member, sink: Callable[[bytes], object]) -> None:
    """Stream ``member`` into ``sink``: no more bytes than its header says, and its CRC checked."""
    try:
        read_member(backup.archive, member.info, sink, member.info.file_size, CHUNK)
    except UnsafeZipError as exc:
        raise BackupDamagedError(backup.path, str(exc)) from exc
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise BackupDamagedError(backup.path, f"{member.info.filename}: {exc}") from exc
