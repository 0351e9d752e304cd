"""What `san` loads before a command runs: building the parser, or printing a command's help, imports no
database layer (SQLAlchemy, the models, the queue's monitor, the facade) and none of the heavy packages.
Every `san scrap add` pays for what the parser imports; and `san scrap add` itself never loads the ORM."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from san_desktop.core.paths import database_path
from tests.support.processes import run_python, run_san

NOT_BEFORE_A_COMMAND_RUNS = (
    "sqlalchemy",
    "alembic",
    "san_desktop.db.models",
    "san_desktop.db.database",
    "san_desktop.queue.monitor",
    "san_desktop.queue.store",
    "san_desktop.app",
    "san_desktop.bootstrap",
    "numpy",
    "httpx",
    "PySide6",
)

# prints the modules of NOT_BEFORE_A_COMMAND_RUNS (given in argv[1]) that are loaded, after argv[2:] ran
# through `san`'s main() (help exits) or, with no arguments, after build_parser()
LOADED = """
import sys
from san_desktop.cli.main import build_parser, main
watched, arguments = sys.argv[1].split(","), sys.argv[2:]
try:
    main(arguments) if arguments else build_parser()
except SystemExit:
    pass
print("loaded=" + ",".join(name for name in watched if name in sys.modules))
"""


def test_the_watched_modules_exist() -> None:
    """A renamed module would make the tests below pass whatever is imported."""
    assert [name for name in NOT_BEFORE_A_COMMAND_RUNS if importlib.util.find_spec(name) is None] == []


@pytest.mark.parametrize(
    "arguments", [[], ["--help"], ["scrap", "add", "--help"], ["jobs", "list", "--help"]], ids=" ".join
)
def test_building_the_parser_imports_no_database_layer(arguments: list[str]) -> None:
    result = run_python(["-c", LOADED, ",".join(NOT_BEFORE_A_COMMAND_RUNS), *arguments])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "loaded="
    if arguments:
        assert "usage: san" in result.stdout  # the help was printed, by the parser that was built


# `san scrap add` stores the scrap, enqueues its jobs and records its change notice on SQLAlchemy Core:
# printed after main() returned, whether the ORM (or the models mapped with it) was ever imported
CAPTURED = """
import sys
from san_desktop.cli.main import main
code = main(sys.argv[1:])
print("exit=" + str(code))
print("orm=" + ",".join(name for name in ("sqlalchemy.orm", "san_desktop.db.models") if name in sys.modules))
"""


def test_scrap_add_captures_without_the_orm(data_dir: Path) -> None:
    made = run_san("jobs", "sweep")  # the database is made (migrating loads the models), as on a first start
    assert made.returncode == 0, made.stderr
    result = run_python(["-c", CAPTURED, "scrap", "add", "--text", "captured on Core"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2:] == ["exit=0", "orm="]
    scrap_id = lines[0].removeprefix("scrap ")
    analysis_id, refine_id = lines[1].removeprefix("jobs ").split()

    connection = sqlite3.connect(database_path(data_dir))
    try:
        scraps = connection.execute("SELECT id, content, source_type FROM scraps").fetchall()
        jobs = connection.execute("SELECT id, job_type, target_id, status FROM async_jobs ORDER BY id").fetchall()
        notices = connection.execute("SELECT kind, item_id FROM change_notices").fetchall()
    finally:
        connection.close()
    assert scraps == [(scrap_id, "captured on Core", "TEXT")]
    assert jobs == [
        (analysis_id, "CARD_ANALYSIS", scrap_id, "PENDING"),
        (refine_id, "SCRAP_REFINE", scrap_id, "PENDING"),
    ]
    assert notices == [("scrap", scrap_id)]

    again = run_python(["-c", CAPTURED, "scrap", "add", "--text", "captured on Core"])
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == f"duplicate of {scrap_id}"
    assert again.stdout.splitlines()[-1] == "orm="
