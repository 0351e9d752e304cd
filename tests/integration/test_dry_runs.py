"""Every command that takes ``--dry-run`` writes nothing at all (issue 38, item 3): found in ``san``'s own
argument tree (a command that gains ``--dry-run`` is run here without a word more), run with each of its
options on a library with cards, a TIL and its files, answered quizzes, an import and something in the
Trash, and after each run every table's rows and every file of the data folder (name, size, content) are as
they were, and so is the git repository a TIL commit would go to."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from san_desktop.app import open_app
from san_desktop.cli.main import build_parser, main
from san_desktop.core.enums import SourceType
from san_desktop.core.settings import DATABASE_URL_ENV, with_value
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan
from tests.support.git_repo import user_repository
from tests.support.library import every_file, every_row, made_by_jobs

DRY_RUN = "--dry-run"
# the commands that have a dry run today (more may come: they are found, and must then run here too)
KNOWN = {
    ("import",),
    ("til", "commit"),
    ("til", "export"),
    ("trash", "empty"),
    ("export", "anki"),
    ("export", "markdown"),
    ("export", "bookmarks"),
    ("export", "all"),
}
LOG_DIR = "logs"  # the log says what ran, reads included: it is not the library
# what a server's library refuses with a sentence (`san db copy` backs it up)
FILE_LIBRARY_ONLY = {("export", "all")}


@pytest.fixture(
    params=["the test run's database", pytest.param("PostgreSQL", marks=pytest.mark.postgresql)], ids=["default", "pg"]
)
def library(request: pytest.FixtureRequest, data_dir: Path, tmp_path: Path) -> dict[tuple[str, ...], str]:
    """A library with something of everything, closed (as when no window is open); the values the commands'
    arguments take, by (command..., argument)."""
    repository = user_repository(tmp_path / "til-repository")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "raft.md").write_text("Raft elects a leader with randomised election timeouts.", encoding="utf-8")
    with open_app(data_dir, kind="gui", log_to_stderr=False) as app:
        day = made_by_jobs(app)
        github = with_value(app.settings, "github", "target", "local")
        app.save_settings(with_value(github, "github", "local_repository", str(repository)))
        plan = ImportPlan(
            ImportKind.MARKDOWN,
            "/notes",
            [
                ImportItem(SourceType.FILE, f"Note {n}: B-trees keep keys sorted in pages.", f"n{n}.md")
                for n in range(3)
            ],
            [],
        )
        batch = app.store_import(plan).value.batch_id
        assert batch is not None
        app.delete_scrap(app.scraps.list_scraps()[-1].id)  # something in the Trash
        app.capture_url("https://example.com/raft", "Raft")  # a link, for the bookmarks (its page never fetched)
    return {
        ("import", "path"): str(vault),
        ("import", "undo"): batch,
        ("date",): day,
        ("repository",): str(repository),
    }


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
        elif DRY_RUN in action.option_strings:
            yield path, parser


def _sample(
    command: tuple[str, ...], action: argparse.Action, known: dict[tuple[str, ...], str], outside: Path
) -> list[str]:
    """The values to try for ``action`` of ``command``: what the library has, each choice, or a path outside
    the data folder that does not exist yet (named as the argument's metavar asks: FILE.zip, DIR)."""
    if (given := known.get((*command, action.dest)) or known.get((action.dest,))) is not None:
        return [given]
    if action.choices:
        return [str(choice) for choice in action.choices]
    if action.type is Path:
        metavar = str(action.metavar or action.dest)
        suffix = Path(metavar).suffix
        return [str(outside / f"{'-'.join(command)}-{action.dest}{suffix}")]
    return []


def _runs(
    command: tuple[str, ...], parser: argparse.ArgumentParser, known: dict[tuple[str, ...], str], outside: Path
) -> list[list[str]]:
    """The command with its positional arguments and --dry-run; then with each option added in turn (each
    value of an option with choices), and once more without the positional arguments that may be left out."""
    base = list(command)
    optional_positionals = False
    for action in parser._actions:
        if action.required and action.option_strings:  # an option the command cannot run without
            values = _sample(command, action, known, outside)
            assert values, f"give a value for {' '.join(command)} {max(action.option_strings, key=len)}"
            base += [max(action.option_strings, key=len), values[0]]
            continue
        if action.option_strings or isinstance(action, argparse._SubParsersAction):
            continue
        values = _sample(command, action, known, outside)
        if not values:
            assert action.nargs in ("?", "*"), f"give a value for {' '.join(command)} {action.metavar or action.dest}"
            continue
        optional_positionals = optional_positionals or action.nargs in ("?", "*")
        base.append(values[0])
    runs = [[*base, DRY_RUN]]
    for action in parser._actions:
        if not action.option_strings or action.required or action.dest in ("help", "dry_run"):
            continue
        flag = max(action.option_strings, key=len)
        if action.nargs == 0:
            runs.append([*base, DRY_RUN, flag])
            if optional_positionals:
                runs.append([*command, DRY_RUN, flag])
            continue
        for value in _sample(command, action, known, outside):
            runs.append([*base, DRY_RUN, flag, value])
            if optional_positionals:
                runs.append([*command, DRY_RUN, flag, value])
    return runs


def _state(data_dir: Path, repository: Path) -> tuple[object, ...]:
    files = {name: found for name, found in every_file(data_dir).items() if not name.startswith(f"{LOG_DIR}/")}
    return every_row(data_dir), files, every_file(repository)


def test_every_command_with_a_dry_run_writes_nothing(
    library: dict[tuple[str, ...], str], data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repository = Path(library[("repository",)])
    commands = dict(_commands(build_parser()))
    assert set(commands) >= KNOWN
    before = _state(data_dir, repository)
    succeeded: set[tuple[str, ...]] = set()
    for command, parser in commands.items():
        for argv in _runs(command, parser, library, outside):
            code = main(argv)
            said = capsys.readouterr()
            assert _state(data_dir, repository) == before, f"`san {' '.join(argv)}` wrote: {said.out}{said.err}"
            assert not any(outside.iterdir()), f"`san {' '.join(argv)}` wrote outside the data folder"
            if code == 0:
                succeeded.add(command)
    refused = FILE_LIBRARY_ONLY if os.environ.get(DATABASE_URL_ENV) else set()
    assert succeeded == set(commands) - refused  # each was run as it is meant to be, not only refused


def test_a_dry_run_of_undo_import_says_what_would_go_and_undoes_nothing(
    library: dict[tuple[str, ...], str], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = every_row(data_dir)
    assert main(["import", "--undo", library[("import", "undo")], DRY_RUN]) == 0
    assert capsys.readouterr().out == "Would move the 3 scraps imported from /notes to the Trash.\n"
    assert every_row(data_dir) == before
    assert main(["import", "--list"]) == 0
    assert library[("import", "undo")] in capsys.readouterr().out  # still there to undo
