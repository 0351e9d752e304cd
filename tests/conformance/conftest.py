"""The conformance suite: what every library backend must do, run against both in every run (as River runs its
driver tests against each driver). A library of each kind is opened as the app opens it: a SQLite file in the
test's data folder, a database of its own on the test PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from san_desktop.core.paths import database_path
from san_desktop.db.database import Database, open_database, open_server_database

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    folder = tmp_path / "san-data"
    folder.mkdir()
    if request.param == "sqlite":
        database = open_database(database_path(folder))
    else:
        database = open_server_database(request.getfixturevalue("postgres_library_url"), folder)
    yield database
    database.dispose()
