"""The rules of an edge, in the one place exports and imports share: a file appearing or changing while an
export is written is never replaced unasked, and no path inside a folder leaves it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from san_desktop.core.errors import SanError
from san_desktop.core.user_files import (
    Confined,
    LinkInPathError,
    TargetExistsError,
    new_file,
    read_regular,
    write_file,
)


def test_a_file_that_appears_while_the_new_one_is_written_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "export.zip"
    with pytest.raises(TargetExistsError), new_file(target) as temporary:
        temporary.write_bytes(b"the export")
        target.write_bytes(b"written meanwhile by someone else")
    assert target.read_bytes() == b"written meanwhile by someone else"
    assert [entry.name for entry in tmp_path.iterdir()] == ["export.zip"]


def test_a_link_put_in_place_while_replacing_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    target, victim = tmp_path / "export.zip", tmp_path / "victim.txt"
    target.write_bytes(b"old export")
    victim.write_bytes(b"theirs")
    with pytest.raises(SanError, match="is a link"), new_file(target, overwrite=True) as temporary:
        temporary.write_bytes(b"the export")
        target.unlink()
        target.symlink_to(victim)
    assert victim.read_bytes() == b"theirs"
    assert target.is_symlink()
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["export.zip", "victim.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "export.zip"
    target.write_bytes(b"old export")
    with pytest.raises(OSError, match="disk"), new_file(target, overwrite=True) as temporary:
        temporary.write_bytes(b"half")
        raise OSError("the disk is full")
    assert target.read_bytes() == b"old export"
    assert [entry.name for entry in tmp_path.iterdir()] == ["export.zip"]


@pytest.mark.parametrize("relative", ["../x.md", "Cards/../../x.md", "Cards\\..\\x.md"])
def test_a_path_that_steps_out_of_the_folder_is_refused(tmp_path: Path, relative: str) -> None:
    with pytest.raises(LinkInPathError, match="outside the folder"):
        Confined(tmp_path).path(relative)


def test_a_link_on_the_way_is_refused_and_one_at_the_end_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("theirs")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Cards").symlink_to(outside, target_is_directory=True)
    (vault / "x.md").symlink_to(outside / "x.md")
    folder = Confined(vault)

    with pytest.raises(LinkInPathError, match=f"{vault / 'Cards'} is a link \\(to {outside}\\)"):
        folder.read("Cards/x.md", 100)
    assert folder.read("x.md", 100) is None
    assert not folder.remove("x.md")
    with pytest.raises(SanError, match="is a link"):
        folder.write("x.md", b"mine", overwrite=True)
    assert (outside / "x.md").read_text() == "theirs"
    assert (vault / "x.md").is_symlink()


def test_a_pipe_is_not_read_and_does_not_hang_the_reader(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert read_regular(tmp_path / "pipe", 100) is None


def test_a_new_file_has_the_usual_permissions_a_replaced_one_keeps_its_own(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_file(tmp_path / "til.md", lambda path: path.write_bytes(b"new"))
        write_file(tmp_path / "backup.zip", lambda path: path.write_bytes(b"new"), private=True)
        (tmp_path / "shared.md").write_bytes(b"old")
        (tmp_path / "shared.md").chmod(0o640)
        write_file(tmp_path / "shared.md", lambda path: path.write_bytes(b"new"), overwrite=True)
    finally:
        os.umask(previous)
    modes = {entry.name: stat.S_IMODE(entry.stat().st_mode) for entry in tmp_path.iterdir()}
    assert modes == {"til.md": 0o644, "backup.zip": 0o600, "shared.md": 0o640}
