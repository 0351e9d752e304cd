"""The import contracts that keep each database's own code behind the seam (``pyproject.toml``, issue 39) hold for
the app, and break when a module above the seam imports a backend's own module, a database driver or SQLAlchemy's
dialects: checked by import-linter itself, with the project's configuration, on the app's real import graph with
one offending import added."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from importlinter import configuration
from importlinter.adapters.building import GraphBuilder
from importlinter.application import use_cases
from importlinter.application.app_config import settings

from tests.support.import_contracts import imports_module

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
CONTRACTS = DRIVERS, BACKENDS = "drivers", "backends"  # their ids


class _WithImport(GraphBuilder):
    """The app's import graph, with one more import in it."""

    def __init__(self, importer: str, imported: str, line: str) -> None:
        self.extra = (importer, imported, line)

    def build(self, *args: Any, **kwargs: Any) -> Any:
        graph = super().build(*args, **kwargs)
        importer, imported, line = self.extra
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=line)
        return graph


@pytest.fixture(autouse=True)
def _configured() -> Iterator[None]:
    configuration.configure()
    yield
    configuration.configure()  # (import-linter's settings are global)


def _broken(importer: str | None = None, imported: str = "", line: str = "") -> set[str]:
    """The seam's contracts that break (with ``importer`` importing ``imported`` by ``line``), as ``lint-imports
    --contract ID`` finds them (a contract that is not there would look broken: it must be there)."""
    options = use_cases.read_user_options(str(PYPROJECT))
    assert set(CONTRACTS) <= {contract.get("id") for contract in options.contracts_options}
    if importer is not None:
        settings.configure(GRAPH_BUILDER=_WithImport(importer, imported, line))
    return {
        contract
        for contract in CONTRACTS
        if not use_cases.lint_imports(str(PYPROJECT), limit_to_contracts=(contract,), cache_dir=None, no_logo=True)
    }


def test_the_app_keeps_the_seams_contracts() -> None:
    assert _broken() == set()


def test_a_service_importing_a_backends_own_module_breaks_the_contract() -> None:
    broken = _broken(
        "san_desktop.services.search",
        "san_desktop.db.backends.sqlite.search",
        "from san_desktop.db.backends.sqlite.search import SqliteSearch",
    )
    assert BACKENDS in broken


def test_the_command_line_importing_the_server_backend_breaks_the_contract() -> None:
    broken = _broken(
        "san_desktop.cli.cards", "san_desktop.db.backends.postgres.backend", "import san_desktop.db.backends.postgres"
    )
    assert BACKENDS in broken


def test_a_service_importing_sqlalchemys_dialects_breaks_the_drivers_contract() -> None:
    broken = _broken(
        "san_desktop.services.library_settings", "sqlalchemy", "from sqlalchemy.dialects import postgresql"
    )
    assert DRIVERS in broken
    assert BACKENDS not in broken


@pytest.mark.parametrize(
    ("imported", "line"),
    [("sqlite3", "import sqlite3"), ("psycopg", "from psycopg import sql"), ("sqlite_vec", "import sqlite_vec")],
)
def test_a_module_above_the_seam_importing_a_driver_breaks_the_drivers_contract(imported: str, line: str) -> None:
    assert DRIVERS in _broken("san_desktop.transfer.backup", imported, line)


def test_a_backend_may_import_its_driver_and_sqlalchemy_itself_is_anyones() -> None:
    assert DRIVERS not in _broken("san_desktop.db.backends.postgres.search", "psycopg", "import psycopg")
    assert DRIVERS not in _broken("san_desktop.services.cards", "sqlalchemy", "import sqlalchemy as sa")


@pytest.mark.parametrize(
    ("line", "module", "imports"),
    [
        ("from sqlalchemy.dialects.sqlite import insert", "sqlalchemy.dialects", True),
        ("from sqlalchemy import dialects", "sqlalchemy.dialects", True),
        ("import sqlalchemy.dialects.postgresql as pg", "sqlalchemy.dialects", True),
        ("import sqlalchemy as sa", "sqlalchemy.dialects", False),
        ("from sqlalchemy import event, exc", "sqlalchemy.dialects", False),
        ("from sqlalchemy.dialectsx import y", "sqlalchemy.dialects", False),
        ("import os, sqlite3", "sqlite3", True),
        ("something grimp found that is not an import statement", "sqlite3", True),
    ],
)
def test_an_import_line_is_read_for_the_part_of_a_package_it_imports(line: str, module: str, imports: bool) -> None:
    assert imports_module(line, module) is imports
