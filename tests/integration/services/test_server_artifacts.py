"""Generated files of a library on a PostgreSQL server are rows of the database: one machine reads what another
wrote, under the rules the data folder's files follow."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.db.database import Database
from san_desktop.db.models import Artifact
from san_desktop.services.artifact_stores import ServerArtifactStore, artifact_store


def test_a_sqlite_library_keeps_files_and_a_servers_keeps_rows(
    sqlite_db: Database, machines: tuple[Database, Database]
) -> None:
    assert type(artifact_store(sqlite_db)) is ArtifactStore
    assert isinstance(artifact_store(machines[0]), ServerArtifactStore)


def test_what_one_machine_writes_another_reads(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    run = artifact_store(laptop).run("run-1")
    key = run.write_text("til", "day-1", 1, "md", "# TIL\n\n트랜잭션 격리")
    run.publish_pending()
    assert artifact_store(desktop).read_text(key) == "# TIL\n\n트랜잭션 격리"
    assert not any((laptop.data_dir / "artifacts").glob("**/*"))  # nothing in the folder
    with pytest.raises(ValueError, match="already written by this run"):
        run.write_text("til", "day-1", 1, "md", "again")
    with pytest.raises(FileNotFoundError):
        artifact_store(desktop).read_text("til/missing.md")


def test_a_run_discards_only_what_it_never_published(machines: tuple[Database, Database]) -> None:
    laptop, desktop = machines
    store = artifact_store(laptop)
    run = store.run("run-2")
    kept = run.write_text("til", "day-1", 1, "md", "published")
    run.publish_pending()
    dropped = run.write_text("til", "day-1", 2, "md", "never published")
    other = store.run("run-3").write_text("til", "day-1", 2, "md", "another run's")

    assert [path.as_posix() for path in run.discard()] == [dropped]

    reader = artifact_store(desktop)
    assert reader.read_text(kept) == "published"
    assert reader.read_text(other) == "another run's"
    with pytest.raises(FileNotFoundError):
        reader.read_text(dropped)


def test_the_sweep_removes_old_rows_no_record_refers_to(machines: tuple[Database, Database]) -> None:
    laptop, _desktop = machines
    store = artifact_store(laptop)
    run = store.run("run-4")
    referenced, orphan, recent = (run.write_text("til", "day-1", n, "md", f"v{n}") for n in (1, 2, 3))
    with laptop.write() as session:
        session.execute(
            sa.update(Artifact)
            .where(Artifact.key.in_([referenced, orphan]))
            .values(created_at=laptop.clock() - timedelta(days=2))
        )

    assert store.sweep_orphans({referenced}) == [orphan]

    with laptop.sessions() as session:
        assert set(session.scalars(sa.select(Artifact.key))) == {referenced, recent}
