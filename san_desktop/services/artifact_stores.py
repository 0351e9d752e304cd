"""Where a library keeps its generated files: the data folder's ``artifacts`` (a SQLite library) or, for a
library on a server, the ``artifacts`` table (revision 0023), so that every machine sharing it reads what
another wrote. Both keep the same keys, names and rules (``artifacts.store``): a run's names are its own, what
a run never published is deleted by it, what a crash left is swept once no row refers to it."""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from san_desktop.artifacts.store import ArtifactStore, RunFiles, artifact_name, check_kind
from san_desktop.db.database import Database
from san_desktop.db.types import UTCDateTime

log = logging.getLogger(__name__)

# ``db.models.Artifact`` as a lightweight Core table: the app's start does not load the ORM for it
_ROWS = sa.table(
    "artifacts",
    sa.column("key", sa.String()),
    sa.column("data", sa.LargeBinary()),
    sa.column("created_at", UTCDateTime()),
)


def artifact_store(db: Database) -> ArtifactStore:
    """The library's store: its data folder's files, or the database's rows for a library on a server."""
    return ServerArtifactStore(db) if db.shares_library else ArtifactStore(db.data_dir)


class ServerArtifactStore(ArtifactStore):
    """Generated files as rows of the library's ``artifacts`` table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db.data_dir)
        self.db = db

    def path(self, key: str) -> Path:
        raise ValueError(f"the artifact {key!r} is a row of the library's database, not a file")

    def read_bytes(self, key: str) -> bytes:
        with self.db.sessions() as session:
            data = session.scalar(sa.select(_ROWS.c.data).where(_ROWS.c.key == key))
        if data is None:
            raise FileNotFoundError(f"no artifact {key!r} in the library's database")
        return bytes(data)

    def read_text(self, key: str) -> str:
        return self.read_bytes(key).decode("utf-8")

    def delete(self, key: str) -> None:
        with self.db.write() as session:
            session.execute(sa.delete(_ROWS).where(_ROWS.c.key == key))

    def exists(self, key: str) -> bool:
        with self.db.sessions() as session:
            return session.scalar(sa.select(sa.literal(1)).where(_ROWS.c.key == key)) is not None

    def run(self, run_id: str) -> RunFiles:
        return ServerRunFiles(self, run_id)

    def sweep_orphans(self, referenced: Collection[str], older_than_seconds: float = 86_400.0) -> list[str]:
        cutoff = self.db.clock() - timedelta(seconds=older_than_seconds)
        with self.db.write() as session:
            old = session.scalars(sa.select(_ROWS.c.key).where(_ROWS.c.created_at < cutoff)).all()
            removed = sorted(key for key in old if key not in referenced)
            for start in range(0, len(removed), 500):
                session.execute(sa.delete(_ROWS).where(_ROWS.c.key.in_(removed[start : start + 500])))
        if removed:
            log.info("Removed %d artifact(s) that no record references: %s", len(removed), removed[:20])
        return removed


class ServerRunFiles(RunFiles):
    """The rows one run writes, each committed as it is written (as a file is), kept once ``publish_pending``
    says the rows that refer to them committed; ``discard`` deletes the others."""

    store: ServerArtifactStore

    def write_bytes(self, kind: str, target_id: str, version: int, ext: str, data: bytes) -> str:
        check_kind(kind)
        key = f"{kind}/{artifact_name(target_id, version, self.run_id, ext)}"
        path = Path(key)  # the pending list's entries (a file's path elsewhere): the key
        with self._lock:
            self._pending.append(path)
        try:
            with self.store.db.write() as session:
                session.execute(sa.insert(_ROWS).values(key=key, data=data, created_at=self.store.db.clock()))
        except sa.exc.IntegrityError:
            raise ValueError(f"{key} was already written by this run") from None
        return key

    def discard(self) -> list[Path]:
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            keys = [path.as_posix() for path in pending]
            with self.store.db.write() as session:
                session.execute(sa.delete(_ROWS).where(_ROWS.c.key.in_(keys)))
            log.info("Run %s deleted %d unpublished artifact(s)", self.run_id, len(pending))
        return pending
