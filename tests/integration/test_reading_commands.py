"""Commands that only read the library write nothing of it: pointed at an empty PostgreSQL database they leave
it empty (no schema, no shared settings), and at a missing SQLite file they make none; an older library is left
as it is. `san db copy --to` takes a database holding only SAN Desktop's empty schema (what an earlier version's
`san config show` left), and the login a server refuses is said as such."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.app import open_app
from san_desktop.cli.common import READING_COMMANDS, only_reads
from san_desktop.cli.main import build_parser, main
from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.backends.sqlite.engine import choose_driver
from san_desktop.db.backends.sqlite.migrate import read_revision
from san_desktop.db.database import open_database
from san_desktop.db.migrate import head_revision
from san_desktop.transfer.db_copy import copy_to_server
from tests.support.library import table_fingerprints

SOME_ID = "01a24e4e-6f20-73fb-be70-9f61e235350d"
DAY = "2024-05-01"
# each reading command as a person types it
TYPED: dict[tuple[str, str | None], list[str]] = {
    ("scrap", "list"): ["scrap", "list"],
    ("cards", "list"): ["cards", "list"],
    ("cards", "show"): ["cards", "show", SOME_ID],
    ("cards", "similar"): ["cards", "similar", SOME_ID],
    ("search", None): ["search", "vacuum"],
    ("jobs", "list"): ["jobs", "list"],
    ("jobs", "show"): ["jobs", "show", SOME_ID],
    ("jobs", "failures"): ["jobs", "failures"],
    ("til", "list"): ["til", "list"],
    ("til", "show"): ["til", "show", DAY],
    ("til", "commits"): ["til", "commits", DAY],
    ("quiz", "due"): ["quiz", "due"],
    ("stars", "recommend"): ["stars", "recommend"],
    ("config", "show"): ["config", "show"],
    ("trash", "list"): ["trash", "list"],
}
# and every dry run (tests/integration/test_dry_runs.py runs each of them on a library with something of everything)
DRY_RUNS = [
    ["trash", "empty", "--dry-run"],
    ["import", "--undo", SOME_ID, "--dry-run"],
    ["til", "commit", DAY, "--dry-run"],
]
EVERY_READING_COMMAND = [*TYPED.values(), ["import", "--list"], *DRY_RUNS]


def _tables(url: str) -> list[str]:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return sorted(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()


def test_every_reading_command_is_typed_here_and_is_told_apart_from_the_others() -> None:
    assert set(TYPED) == set(READING_COMMANDS)
    parser = build_parser()
    for typed in EVERY_READING_COMMAND:
        assert only_reads(parser.parse_args(typed)), typed
    for writing in (
        ["scrap", "add", "--text", "x"],
        ["jobs", "retry", SOME_ID],
        ["import", "--undo", "b"],
        ["trash", "empty"],
    ):
        assert not only_reads(parser.parse_args(writing)), writing


@pytest.mark.parametrize("typed", EVERY_READING_COMMAND, ids=" ".join)
def test_a_reading_command_leaves_an_empty_server_database_empty_and_reads_an_empty_library(
    typed: list[str],
    postgres_url: str,
    postgres_library_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    code = main(typed)
    said = capsys.readouterr()
    assert "Traceback" not in said.err
    assert _tables(postgres_url) == []
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_library_url)  # a library made, and empty
    assert (code, said.out) == (main(typed), capsys.readouterr().out)


@pytest.mark.sqlite
@pytest.mark.parametrize("typed", [["scrap", "list"], ["jobs", "failures"], ["config", "show"]], ids=" ".join)
def test_a_reading_command_makes_no_database_file(
    typed: list[str], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(typed) == 0
    assert not database_path(data_dir).exists()
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.sqlite
def test_a_reading_command_leaves_an_older_library_as_it_is(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alembic import command

    from san_desktop.db.migrate import alembic_config

    data_dir.mkdir(parents=True)
    path = database_path(data_dir)
    open_database(path).dispose()
    driver = choose_driver()
    engine = sa.create_engine(f"sqlite:///{path}", module=driver.module)
    with engine.begin() as conn:  # one revision back, as a library an older version made
        config = alembic_config()
        config.attributes["connection"] = conn
        command.downgrade(config, "-1")
    engine.dispose()
    older = read_revision(path, driver)
    assert older is not None
    assert older != head_revision()
    before = table_fingerprints(path)

    assert main(["scrap", "list"]) == 4
    said = capsys.readouterr().err
    assert f"at schema revision {older}, older than this version's" in said
    assert read_revision(path, driver) == older
    assert table_fingerprints(path) == before
    assert not list(data_dir.glob("*.backup-*"))  # no upgrade began either


@pytest.mark.sqlite
def test_config_show_then_db_copy_goes_into_the_database(
    data_dir: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scrap", "add", "--text", "VACUUM reclaims the space of dead row versions."]) == 0
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    assert main(["config", "show"]) == 0
    monkeypatch.delenv(DATABASE_URL_ENV)
    capsys.readouterr()

    assert main(["db", "copy", "--to", postgres_url]) == 0
    assert "every table's rows and checksum match" in capsys.readouterr().out


@pytest.mark.sqlite
def test_db_copy_takes_a_database_holding_only_an_empty_schema(
    data_dir: Path, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_app(data_dir, kind="cli", lock=False, log_to_stderr=False) as app:
        app.capture_text("VACUUM reclaims the space of dead row versions.")
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    with open_app(tmp_path / "laptop", kind="gui", log_to_stderr=False) as on_server:  # schema, settings, a session
        assert on_server.db.shares_library
        assert on_server.scraps.list_scraps() == []
    monkeypatch.delenv(DATABASE_URL_ENV)

    summary = copy_to_server(data_dir, postgres_url, progress=lambda _line: None)  # and again: refused
    assert summary.rows["scraps"] == 1
    with pytest.raises(Exception, match=r"already holds a library \(scraps has rows\)"):
        copy_to_server(data_dir, postgres_url, progress=lambda _line: None)
