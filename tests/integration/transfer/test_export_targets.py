"""Every export to one file (``san export anki``, ``san export all``, ``san til export``) writes a new file or,
told to with ``--overwrite``, replaces a regular one once the new one is whole; a link, a folder, a pipe or a
device is refused with a sentence whatever it is told, a name without the format's extension too, and
``--dry-run`` writes nothing (issue 38, item 1)."""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import genanki
import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from tests.support.devices import device_node
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import finished_til

TEXTS = QUIZ_TEXTS[5:8]
OLD = b"last week's export, kept until a new one is whole"


@dataclass(frozen=True)
class Export:
    name: str
    suffix: str
    arguments: Callable[[str, Path], list[str]]  # (the day, the target) -> the command's arguments
    written: Callable[[Path], bool]  # whether the file at a path is what this export writes

    def run(self, data_dir: Path, day: str, target: Path, *extra: str) -> int:
        return main(["--data-dir", str(data_dir), *self.arguments(day, target), *extra])


def _is_zip(path: Path) -> bool:
    return zipfile.is_zipfile(path)


def _is_til(path: Path) -> bool:
    return path.read_text(encoding="utf-8").startswith("# TIL ")


EXPORTS = [
    Export("anki", ".apkg", lambda _day, target: ["export", "anki", str(target)], _is_zip),
    pytest.param(
        Export("all", ".zip", lambda _day, target: ["export", "all", str(target)], _is_zip),
        marks=pytest.mark.sqlite,  # a backup .zip holds a SQLite library
    ),
    Export("til", ".md", lambda day, target: ["til", "export", day, "--out", str(target)], _is_til),
]


@pytest.fixture
def day(app: SanApp) -> str:
    """A day with cards, quizzes and its finished TIL: something for every export."""
    return finished_til(app, TEXTS)


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def _listing(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.name)
def test_an_existing_file_is_kept_unless_told_to_overwrite(
    export: Export, data_dir: Path, day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    target = folder / f"mine{export.suffix}"
    target.write_bytes(OLD)

    assert export.run(data_dir, day, target) == 1
    assert f"{target} already exists: nothing was written." in capsys.readouterr().err
    assert target.read_bytes() == OLD
    assert _listing(folder) == [target.name]

    assert export.run(data_dir, day, target, "--overwrite") == 0
    assert export.written(target)
    assert _listing(folder) == [target.name]  # no temporary file left beside it


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.name)
@pytest.mark.parametrize("overwrite", [False, True], ids=["asked", "told to overwrite"])
def test_a_link_is_refused_and_what_it_points_to_left_as_it_was(
    export: Export, data_dir: Path, day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], overwrite: bool
) -> None:
    folder = _folder(tmp_path)
    victim = tmp_path / "thesis.docx"
    victim.write_bytes(OLD)
    link = folder / f"backup{export.suffix}"
    link.symlink_to(victim)

    assert export.run(data_dir, day, link, *(["--overwrite"] if overwrite else [])) == 1

    err = capsys.readouterr().err
    assert f"{link} is a link (to {victim}): SAN Desktop does not write through links" in err
    assert "Traceback" not in err
    assert victim.read_bytes() == OLD
    assert link.is_symlink()
    assert _listing(folder) == [link.name]


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.name)
@pytest.mark.parametrize("kind", ["folder", "pipe", "device"])
def test_a_folder_a_pipe_or_a_device_is_refused_with_a_sentence_even_when_told_to_overwrite(
    export: Export, data_dir: Path, day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    folder = _folder(tmp_path)
    if kind == "device":
        target = device_node(folder / f"null{export.suffix}", "null")
    else:
        target = folder / f"odd{export.suffix}"
        if kind == "folder":
            target.mkdir()
        else:
            os.mkfifo(target)
    mode = target.lstat().st_mode
    said = {"folder": f"{target} is a folder: give a file name, e.g. {target}/", "pipe": "is a pipe (FIFO)"}

    for told in ([], ["--overwrite"]):
        assert export.run(data_dir, day, target, *told) == 1
        err = capsys.readouterr().err
        assert said.get(kind, f"{target} is a device, not a regular file: nothing was written") in err
        assert "Traceback" not in err
        assert target.lstat().st_mode == mode
    if kind != "device":
        assert _listing(folder) == [target.name]
        assert not stat.S_ISDIR(mode) or list(target.iterdir()) == []


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.name)
def test_a_name_without_the_formats_extension_is_refused_and_the_file_kept(
    export: Export, data_dir: Path, day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    report = folder / "report.docx"
    report.write_bytes(OLD)

    for told in ([], ["--overwrite"]):
        assert export.run(data_dir, day, report, *told) == 1
        assert f"{report} does not end in {export.suffix}" in capsys.readouterr().err
        assert report.read_bytes() == OLD
    assert _listing(folder) == ["report.docx"]


@pytest.mark.parametrize("export", EXPORTS, ids=lambda export: export.name)
def test_a_dry_run_checks_and_writes_nothing(
    export: Export, data_dir: Path, day: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    new, old = folder / f"new{export.suffix}", folder / f"old{export.suffix}"
    old.write_bytes(OLD)

    assert export.run(data_dir, day, new, "--dry-run") == 0
    assert capsys.readouterr().out.startswith("Would ")
    assert export.run(data_dir, day, old, "--dry-run", "--overwrite") == 0
    assert "replacing it" in capsys.readouterr().out
    assert export.run(data_dir, day, old, "--dry-run") == 1  # refused as the export itself would be
    assert "already exists" in capsys.readouterr().err

    assert _listing(folder) == [old.name]
    assert old.read_bytes() == OLD


def test_an_anki_export_that_fails_leaves_the_old_package_as_it_was(
    data_dir: Path, day: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    target = folder / "san.apkg"
    target.write_bytes(OLD)

    def half_then_full(_package: genanki.Package, path: str) -> None:
        Path(path).write_bytes(b"PK half a package")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(genanki.Package, "write_to_file", half_then_full)
    assert main(["--data-dir", str(data_dir), "export", "anki", str(target), "--overwrite"]) == 1

    assert "the disk is full" in capsys.readouterr().err
    assert target.read_bytes() == OLD
    assert _listing(folder) == ["san.apkg"]
