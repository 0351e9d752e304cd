"""What `san` loads before a command runs: building the parser, or printing a command's help, imports no
database layer (SQLAlchemy, the models, the queue's monitor, the facade) and none of the heavy packages.
Every `san scrap add` pays for what the parser imports."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support.processes import run_python

NOT_BEFORE_A_COMMAND_RUNS = (
    "sqlalchemy",
    "alembic",
    "san_desktop.db.models",
    "san_desktop.db.database",
    "san_desktop.queue.monitor",
    "san_desktop.queue.job_queue",
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
