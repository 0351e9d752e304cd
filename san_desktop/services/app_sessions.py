"""App sessions: one row per start, so recovery can tell live work from a dead process's work."""

from __future__ import annotations

import os
import socket

import sqlalchemy as sa

from san_desktop import __version__
from san_desktop.core.paths import machine_id
from san_desktop.core.timeutil import utcnow
from san_desktop.db.database import Database
from san_desktop.db.models import AppSession


def start_session(db: Database, kind: str) -> str:
    with db.write() as session:
        row = AppSession(
            pid=os.getpid(),
            hostname=socket.gethostname()[:255],
            kind=kind,
            app_version=__version__[:40],
            machine_id=machine_id(db.data_dir),
        )
        session.add(row)
        session.flush()
        return row.id


def end_session(db: Database, session_id: str) -> None:
    with db.write() as session:
        session.execute(sa.update(AppSession).where(AppSession.id == session_id).values(ended_at=utcnow()))
