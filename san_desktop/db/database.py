"""The app's handle on its database: engine, driver and session factory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from san_desktop.db.engine import SqliteDriver, choose_driver, make_engine
from san_desktop.db.migrate import MigrationResult, migrate


@dataclass
class Database:
    path: Path
    driver: SqliteDriver
    engine: sa.Engine
    sessions: sessionmaker[Session]
    migration: MigrationResult

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(path: Path, driver: SqliteDriver | None = None) -> Database:
    """Migrate (backing up first) and open the database; raises ``DatabaseError`` subclasses."""
    chosen = driver or choose_driver()
    result = migrate(path, chosen)
    engine = make_engine(path, chosen)
    return Database(
        path=path,
        driver=chosen,
        engine=engine,
        sessions=sessionmaker(engine, expire_on_commit=False),
        migration=result,
    )
