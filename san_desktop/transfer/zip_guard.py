"""Reading a zip file someone hands us without trusting it: only a regular file (never a folder, a named pipe, a
device or a symbolic link), its central directory counted before ``zipfile`` turns it into objects, a member's
method and flags checked before it is opened, its bytes read with a running count that stops at a bound, and
JSON whose nesting is measured before it is parsed.

Each refusal is an ``UnsafeZipError`` whose text completes a sentence ("… is not a SAN Desktop backup (TEXT)");
the caller says what was not done."""

from __future__ import annotations

import itertools
import os
import re
import stat
import struct
import zipfile
from collections.abc import Callable
from typing import BinaryIO

from san_desktop.core.user_files import kind_of

_END, _END64_LOCATOR, _END64, _CENTRAL = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06", b"PK\x01\x02"
_END_SIZE, _END64_LOCATOR_SIZE, _END64_SIZE, _CENTRAL_SIZE = 22, 20, 56, 46
_MAX_COMMENT = 0xFFFF

# what zipfile reads, by method id; others are named so the sentence says which one it is
READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_METHOD_NAMES = {9: "Deflate64", 12: "bzip2", 14: "LZMA", 93: "Zstandard", 95: "XZ", 96: "JPEG", 98: "PPMd", 99: "AES"}
_ENCRYPTED, _PATCHED, _STRONGLY_ENCRYPTED = 0x1, 0x20, 0x40

_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_A_BRACKET = re.compile(rb"[^\[\]{}]++")
_BRACKET_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class UnsafeZipError(ValueError):
    """Why a zip (or a member of it) is not read, in words that complete a sentence."""


def open_regular_file(path: os.PathLike[str] | str) -> BinaryIO:
    """``path`` opened to read when it is a regular file itself (not through a symbolic link, never waiting on
    a named pipe), checked on the opened file so nothing can be swapped in between."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UnsafeZipError("it is a symbolic link; name the file it points to")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise UnsafeZipError("it is a folder, not a file") from None
    except OSError as exc:
        raise UnsafeZipError(f"it cannot be read: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeZipError(f"it is {kind_of(mode)}, not {'a file' if stat.S_ISDIR(mode) else 'a regular file'}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def check_directory(file: BinaryIO, max_members: int, max_bytes: int) -> None:
    """Count the members of the zip's central directory (as ``zipfile`` will find it) without building them:
    ``zipfile`` reads the whole directory into memory and makes an object of every entry, so a small file can
    hold millions. A zip whose directory cannot be found is left for ``zipfile`` to call damaged."""
    found = _directory_extent(file)
    if found is None:
        return
    start, size = found
    if size > max_bytes:
        raise UnsafeZipError(f"its list of members takes {size:,} bytes; at most {max_bytes:,}")
    file.seek(start)
    directory = file.read(size)
    position = members = 0
    while position + _CENTRAL_SIZE <= len(directory) and directory[position : position + 4] == _CENTRAL:
        members += 1
        if members > max_members:
            raise UnsafeZipError(f"it has more than {max_members:,} members")
        name, extra, comment = struct.unpack_from("<3H", directory, position + 28)
        position += _CENTRAL_SIZE + name + extra + comment


def _directory_extent(file: BinaryIO) -> tuple[int, int] | None:
    """Where the central directory starts and its declared size, found as ``zipfile._EndRecData`` finds it
    (the end record last, or the last one within a comment's reach; a zip64 record just before it)."""
    file_size = file.seek(0, os.SEEK_END)
    tail_start = max(file_size - _END_SIZE - _MAX_COMMENT, 0)
    file.seek(tail_start)
    tail = file.read()
    if tail[-_END_SIZE : -_END_SIZE + 4] == _END and tail[-2:] == b"\0\0":
        at = len(tail) - _END_SIZE
    else:
        at = tail.rfind(_END)
        if at < 0 or len(tail) - at < _END_SIZE:
            return None
    end = tail_start + at
    (size,) = struct.unpack_from("<L", tail, at + 12)
    locator = end - _END64_LOCATOR_SIZE
    if locator >= _END64_SIZE:
        file.seek(locator - _END64_SIZE)
        record = file.read(_END64_SIZE + _END64_LOCATOR_SIZE)
        if record[_END64_SIZE : _END64_SIZE + 4] == _END64_LOCATOR and record[:4] == _END64:
            (size,) = struct.unpack_from("<Q", record, 40)
            end = locator - _END64_SIZE
    return (end - size, size) if end >= size else None


def check_member_format(info: zipfile.ZipInfo) -> None:
    """A member this version can read as it is: stored or deflated, neither encrypted nor a patch."""
    if info.flag_bits & (_ENCRYPTED | _STRONGLY_ENCRYPTED):
        raise UnsafeZipError(f"{shown_name(info.filename)} is encrypted")
    if info.flag_bits & _PATCHED:
        raise UnsafeZipError(f"{shown_name(info.filename)} is a patch to another file")
    if info.compress_type not in READABLE_METHODS:
        method = info.compress_type
        named = f" ({_METHOD_NAMES[method]})" if method in _METHOD_NAMES else ""
        raise UnsafeZipError(
            f"{shown_name(info.filename)} is compressed with method {method}{named}, which this version cannot "
            "read; a zip written with Deflate can be read"
        )


def shown_name(name: str, limit: int = 60) -> str:
    """A member's name quoted for a sentence, cut short when it is long."""
    return repr(name if len(name) <= limit else f"{name[: limit - 1]}…")


def read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, sink: Callable[[bytes], object], limit: int, chunk: int
) -> int:
    """Stream the member ``info`` into ``sink`` a chunk at a time (``zipfile`` checks the CRC as the last one is
    read) and return how many bytes it held; ``UnsafeZipError`` once it holds more than ``limit`` or other than
    its header says, before the bytes past the bound reach ``sink``."""
    done = 0
    with archive.open(info) as reader:
        while data := reader.read(min(chunk, limit + 1 - done)):
            done += len(data)
            if done > limit:
                raise UnsafeZipError(f"{shown_name(info.filename)} holds more than {limit:,} bytes")
            sink(data)
    if done != info.file_size:
        raise UnsafeZipError(
            f"{shown_name(info.filename)} holds {done:,} bytes where its header says {info.file_size:,}"
        )
    return done


def json_depth(data: bytes | bytearray) -> int:
    """How deep the arrays and objects of the JSON text ``data`` nest, measured without recursion (strings
    and what is not a bracket left out); for text that is not JSON, whatever its brackets say."""
    brackets = _NOT_A_BRACKET.sub(b"", _JSON_STRING.sub(b"", data))
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)
