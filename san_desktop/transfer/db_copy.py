"""Moving a library between a SQLite file and a PostgreSQL server (`san db copy`): every table, the vectors,
the generated files and the word index of the TILs; then counts and checksums compared table by table.

- ``copy_to_server``: the data folder's SQLite library into an empty database on a server; the file is only
  read (it must be at this version's schema: start SAN Desktop on it once first).
- ``copy_from_server``: a server's library into a new data folder (its SQLite file and its files), for a
  backup or to leave the server; that folder then opens as any other.

Derived indexes are made again where the copy lands (SQLite's FTS5 and PostgreSQL's word tables follow their
triggers); change notices are not copied (news for windows open at the time).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.core.errors import SanError
from san_desktop.core.paths import database_path
from san_desktop.db.backends.postgres.server import describe
from san_desktop.db.backends.sqlite.driver import choose_driver
from san_desktop.db.backends.sqlite.migrate import inspect_database
from san_desktop.db.database import Database, open_database, open_server_database
from san_desktop.db.migrate import head_revision
from san_desktop.db.models import Artifact, Base
from san_desktop.transfer.backup import read_only_engine

BATCH = 1_000
SKIPPED = frozenset({"change_notices"})  # news for the windows open at the time, not the library
# rows a database holds once SAN Desktop opened it, with no library in it yet: a copy's target may hold these
MADE_BY_OPENING = frozenset({"library_settings", "app_sessions", "change_notices"})

Progress = Callable[[str], None]


@dataclass
class CopySummary:
    source: str
    target: str
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows copied (and found in the copy)
    files: int = 0  # generated files (artifacts) copied

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


def _tables() -> list[sa.Table]:
    """The library's tables in an order that inserts every row after the rows it refers to."""
    return [table for table in Base.metadata.sorted_tables if table.name not in SKIPPED and table.name != "artifacts"]


def _plain(value: Any) -> Any:
    """A value as both databases give it back, for the checksums: times in UTC, bytes as base64."""
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.isoformat(timespec="microseconds")
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return int(value)
    return value


def _rows(conn: sa.Connection, table: sa.Table) -> Iterator[list[dict[str, Any]]]:
    """The table's rows, a batch at a time, in primary-key order, as the models read them."""
    order = list(table.primary_key.columns) or list(table.columns)
    result = conn.execution_options(stream_results=True, yield_per=BATCH).execute(sa.select(table).order_by(*order))
    for batch in result.mappings().partitions(BATCH):
        yield [dict(row) for row in batch]


def table_digest(conn: sa.Connection, table: sa.Table) -> tuple[int, str]:
    """(rows, sha256 of their values in primary-key order): equal on both sides when the copy is whole."""
    digest = hashlib.sha256()
    count = 0
    for batch in _rows(conn, table):
        for row in batch:
            digest.update(json.dumps([_plain(row[column.name]) for column in table.columns]).encode("utf-8"))
            count += 1
    return count, digest.hexdigest()


def _copy_tables(source: sa.Connection, target: sa.Connection, summary: CopySummary, progress: Progress) -> None:
    for table in _tables():
        copied = 0
        for batch in _rows(source, table):
            target.execute(sa.insert(table), batch)
            copied += len(batch)
        summary.rows[table.name] = copied
        if copied:
            progress(f"{table.name}: {copied} row(s)")


_ADD_TIL_WORDS = (
    "INSERT INTO til_search (summary_id, version, title, body) VALUES (:summary_id, :version, :title, :body)"
)


def _til_words(source: sa.Connection) -> list[dict[str, Any]]:
    return [
        dict(row)
        for row in source.execute(sa.text("SELECT summary_id, version, title, body FROM til_search")).mappings()
    ]


def _verify(source: sa.Connection, target: sa.Connection, summary: CopySummary) -> None:
    for table in _tables():
        expected, found = table_digest(source, table), table_digest(target, table)
        if expected != found:
            raise SanError(
                f"The copy of {table.name} differs from the original ({found[0]} row(s) where there are "
                f"{expected[0]}, or the same count with other values). Nothing of the copy was kept (it is "
                "written in one transaction), and the original is as it was."
            )


def _empty_the_schema(conn: sa.Connection, where: str) -> None:
    """Make ready a target that holds SAN Desktop's schema and no library: what opening it may have written
    (this machine's shared settings, app sessions, change notices: a `san config show` of an older version
    wrote them) goes, so that the copy's tables equal the original's. Refused, with nothing changed, when any
    other table has rows (a library is there)."""
    for table in [*_tables(), Base.metadata.tables["artifacts"]]:
        if table.name in MADE_BY_OPENING:
            continue
        if conn.execute(sa.select(sa.literal(1)).select_from(table).limit(1)).first() is not None:
            raise SanError(
                f"{where} already holds a library ({table.name} has rows): a copy goes into an empty database "
                "only. Make a new database for it, or empty this one."
            )
    for name in sorted(MADE_BY_OPENING):
        conn.execute(sa.delete(Base.metadata.tables[name]))


def copy_to_server(data_dir: Path, url: str, *, password: str | None = None, progress: Progress = print) -> CopySummary:
    """The SQLite library of ``data_dir`` into the empty database at ``url``; the file is only read."""
    driver = choose_driver()
    path = database_path(data_dir)
    state = inspect_database(path, driver)
    if not state.exists or state.revision is None:
        raise SanError(f"There is no SAN Desktop library in {data_dir} to copy (no {path.name} with a schema).")
    if state.revision != head_revision():
        raise SanError(
            f"The library in {data_dir} is at schema {state.revision}; this version copies {head_revision()}. "
            "Start SAN Desktop (or any `san` command) on it once to upgrade it, then copy it."
        )
    target = open_server_database(url, data_dir, password=password)
    summary = CopySummary(str(path), describe(url))
    reader = read_only_engine(path, driver)
    try:
        with reader.connect() as source, target.engine.begin() as conn:
            _empty_the_schema(conn, summary.target)
            _copy_tables(source, conn, summary, progress)
            words = _til_words(source)
            if words:
                conn.execute(
                    sa.text(_ADD_TIL_WORDS),
                    words,
                )
            summary.files = _files_into_rows(data_dir, conn, target.clock())
            _verify(source, conn, summary)
    finally:
        reader.dispose()
        target.dispose()
    return summary


def _files_into_rows(data_dir: Path, conn: sa.Connection, now: datetime) -> int:
    root = data_dir / ARTIFACT_DIR
    files = (
        sorted(path for path in root.rglob("*") if path.is_file() and not path.name.startswith("."))
        if root.is_dir()
        else []
    )
    for path in files:
        conn.execute(
            sa.insert(Artifact),
            {"key": path.relative_to(root).as_posix(), "data": path.read_bytes(), "created_at": now},
        )
    return len(files)


def copy_from_server(url: str, into: Path, *, password: str | None = None, progress: Progress = print) -> CopySummary:
    """The library at ``url`` into the data folder ``into`` (made if missing; it must hold no library with data):
    its SQLite file and its generated files. The server's database is only read."""
    into.mkdir(parents=True, exist_ok=True)
    path = database_path(into)
    source_db = open_server_database(url, into, password=password, migrated=False)  # read as it is
    target: Database | None = None
    summary = CopySummary(describe(url), str(path))
    try:
        target = open_database(path)
        with source_db.engine.connect() as source, target.engine.begin() as conn:
            _empty_the_schema(conn, str(path))
            _copy_tables(source, conn, summary, progress)
            words = _til_words(source)
            if words:
                conn.execute(sa.text("DELETE FROM til_search"))
                conn.execute(
                    sa.text(_ADD_TIL_WORDS),
                    words,
                )
            summary.files = _rows_into_files(source, into)
            _verify(source, conn, summary)
    finally:
        source_db.dispose()
        if target is not None:
            target.dispose()
    return summary


def _rows_into_files(source: sa.Connection, into: Path) -> int:
    root = into / ARTIFACT_DIR
    count = 0
    for batch in _rows(source, Artifact.__table__):  # type: ignore[arg-type]
        for row in batch:
            target = (root / row["key"]).resolve()
            if not target.is_relative_to(root.resolve()):
                continue  # a key that would leave the folder is no file of ours
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bytes(row["data"]))
            count += 1
    return count
