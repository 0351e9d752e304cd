"""Change notices between processes: read by id, a process's own skipped, pruned by the sweep."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.db.changes import ChangeLog
from san_desktop.db.models import ChangeNotice
from san_desktop.jobs.processors import build_registry
from san_desktop.services.recovery.sweep import sweep


def test_notices_of_other_processes_are_read_once_and_own_ones_skipped(app: SanApp) -> None:
    mine, theirs = ChangeLog("process-a"), ChangeLog("process-b")
    with app.db.write() as session:
        mine.record(session, "scrap", ["s1"])
        theirs.record(session, "scrap", ["s2", "s3"])
    with app.db.sessions() as session:
        cursor, seen = mine.since(session, 0)
        assert seen == [("scrap", "s2"), ("scrap", "s3")]
        assert mine.since(session, cursor) == (cursor, [])


def test_the_sweep_prunes_notices_older_than_a_day(app: SanApp) -> None:
    log = ChangeLog("process-a")
    with app.db.write() as session:
        log.record(session, "scrap", ["old", "new"])
        session.flush()
        session.execute(
            sa.update(ChangeNotice)
            .where(ChangeNotice.item_id == "old")
            .values(created_at=app.queue.clock() - timedelta(days=2))
        )
    sweep(
        app.queue,
        app.backend.require_session(),
        app.settings.jobs,
        hooks=build_registry(app.services, app.providers).sweep_hooks,
    )
    with app.db.sessions() as session:
        assert list(session.scalars(sa.select(ChangeNotice.item_id))) == ["new"]
