from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command

from san_desktop.db.engine import choose_driver, make_engine
from san_desktop.db.migrate import alembic_config


def migrate_to(path: Path, revision: str) -> None:
    """Bring a database file to an exact (older) revision, as an earlier release would have left it."""
    engine = make_engine(path, choose_driver())
    try:
        with engine.begin() as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()


@contextmanager
def raw_connection(path: Path) -> Iterator[Any]:
    """A plain DB-API connection with the app's driver, committed and closed on exit."""
    conn = choose_driver().module.connect(str(path))
    try:
        yield conn
        conn.commit()
    finally:
        conn.close()
