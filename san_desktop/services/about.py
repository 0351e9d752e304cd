"""What the About window says of the running app: its version, its data folder, its database and what it runs on,
the schema and what this start did to it, the log, and the embedded sentence encoder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from san_desktop import __version__
from san_desktop.db.database import Database


@dataclass(frozen=True)
class AboutInfo:
    version: str
    data_dir: Path
    database: str  # the file, or the server's database as people name it
    on_server: bool  # the library is on a PostgreSQL server
    schema_revision: str
    log_file: Path
    runs_on: str  # "SQLite 3.50.4 (sqlite3)", "PostgreSQL 18.3"
    created: bool  # the database was made by this start
    upgraded_from: str | None  # the schema revision it was upgraded from by this start
    backup: Path | None
    embedded_model: str = ""  # the shipped sentence encoder, its license, and whether it is in use


def about(db: Database, data_dir: Path, log_file: Path) -> AboutInfo:
    migration = db.migration
    return AboutInfo(
        version=__version__,
        data_dir=data_dir,
        database=str(db.where),
        on_server=db.shares_library,
        schema_revision=migration.head,
        log_file=log_file,
        runs_on=db.runs_on,
        created=migration.previous is None,
        upgraded_from=migration.previous if migration.upgraded else None,
        backup=migration.backup,
        embedded_model=_embedded_model(),
    )


def _embedded_model() -> str:
    from san_desktop.ai import encoder

    said = encoder.described()
    return said if encoder.usable() else f"{said}: not loaded (similar cards compare words and spelling)"
