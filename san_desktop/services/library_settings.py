"""The settings a library on a server keeps for every machine that shares it (``core.settings.SHARED_SETTINGS``,
table ``library_settings``); a SQLite library has none (its data folder's settings.json holds them all)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from san_desktop.core.settings import Settings, shared_values
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database
from san_desktop.db.models import LibrarySetting

SETTINGS_NOTICE = "settings"  # the change notice that tells other machines' windows to read them again


def read_shared(db: Database) -> dict[str, Any]:
    """The shared settings the library keeps (none yet: empty)."""
    with db.sessions() as session:
        rows = session.execute(sa.select(LibrarySetting.name, LibrarySetting.value)).all()
    return {name: json.loads(value) for name, value in rows}


def write_shared(db: Database, settings: Settings, changelog: ChangeLog, *, announce: bool = True) -> None:
    """Keep ``settings``' shared values for every machine, and (``announce``) tell the other machines' windows."""
    now = db.clock()
    rows = [
        {"name": name, "value": json.dumps(value), "updated_at": now} for name, value in shared_values(settings).items()
    ]
    with db.write() as session:
        db.backend.upsert(session, LibrarySetting.metadata.tables[LibrarySetting.__tablename__], rows)
        if announce:
            changelog.record(session, SETTINGS_NOTICE, ["library"])
