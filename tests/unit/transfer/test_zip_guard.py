"""The zip checks a restore makes before ``zipfile`` reads anything: the members of the central directory
counted where ``zipfile`` finds it (a comment after it, a zip64 end record, bytes before the zip), and JSON's
nesting measured without recursion."""

from __future__ import annotations

import io
import zipfile

import pytest

from san_desktop.transfer.zip_guard import UnsafeZipError, check_directory, json_depth


def _zip(members: int, comment: bytes = b"", prefix: bytes = b"") -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number in range(members):
            archive.writestr(f"artifacts/til/{number}.md", b"")
        archive.comment = comment
    return io.BytesIO(prefix + buffer.getvalue())


@pytest.mark.parametrize(
    ("members", "comment", "prefix"),
    [
        (3, b"", b""),
        (3, b"made by hand", b""),
        (3, b"", b"#!/bin/sh\nexit 0\n"),  # a self-extracting archive's stub before it
        (70_000, b"", b""),  # past 65,535 members: the zip64 end record says how many
    ],
)
def test_the_members_are_counted_as_zipfile_finds_them(members: int, comment: bytes, prefix: bytes) -> None:
    archive = _zip(members, comment, prefix)
    assert len(zipfile.ZipFile(archive).infolist()) == members

    check_directory(archive, members, 64_000_000)
    with pytest.raises(UnsafeZipError, match=f"it has more than {members - 1:,} members"):
        check_directory(archive, members - 1, 64_000_000)


def test_a_directory_larger_than_the_bound_is_refused_before_it_is_read() -> None:
    with pytest.raises(UnsafeZipError, match="its list of members takes 192 bytes; at most 100"):
        check_directory(_zip(3), 10, 100)


def test_a_file_without_a_directory_is_left_for_zipfile_to_refuse() -> None:
    check_directory(io.BytesIO(b"just some notes"), 10, 100)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b'{"format": "san-desktop-backup", "counts": {"scraps": 3}, "missing_files": []}', 2),
        (b'{"a": "[[[{{{", "b": "\\"]]]"}', 1),  # brackets in strings, an escaped quote
        (b"[" * 100_000 + b"]" * 100_000, 100_000),
        (b"3", 0),
    ],
)
def test_json_nesting_is_measured_without_recursion(text: bytes, depth: int) -> None:
    assert json_depth(text) == depth
