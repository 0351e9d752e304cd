"""Change notices between processes (the ``change_notices`` table): recorded inside the writing
transaction, read by other processes by id. On SQLAlchemy Core, so that a capture records its notice
without the ORM."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from san_desktop.core.timeutil import utcnow
from san_desktop.db.database import SessionOrConnection
from san_desktop.db.tables import change_notices

# the kind of notice of a card a person edited (its item: the card's scrap, as the pages know cards by it)
CARD_NOTICE = "card"


class ChangeLog:
    """Notices written by one process (``origin``)."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def record(self, session: SessionOrConnection, kind: str, item_ids: Iterable[str]) -> None:
        now = utcnow()
        rows = [{"origin": self.origin, "kind": kind, "item_id": item, "created_at": now} for item in item_ids]
        if rows:
            session.execute(sa.insert(change_notices), rows)

    def newest_id(self, session: SessionOrConnection) -> int:
        return int(session.scalar(sa.select(sa.func.coalesce(sa.func.max(change_notices.c.id), 0))) or 0)

    def since(
        self, session: SessionOrConnection, after_id: int, limit: int = 1000
    ) -> tuple[int, list[tuple[str, str]]]:
        """(newest id read, [(kind, item id)]) of other processes' notices above ``after_id``."""
        notices = change_notices.c
        rows = session.execute(
            sa.select(notices.id, notices.origin, notices.kind, notices.item_id)
            .where(notices.id > after_id)
            .order_by(notices.id)
            .limit(limit)
        ).all()
        newest = rows[-1].id if rows else after_id
        return newest, [(row.kind, row.item_id) for row in rows if row.origin != self.origin]


def prune_notices(session: SessionOrConnection, before: datetime) -> int:
    result = session.execute(sa.delete(change_notices).where(change_notices.c.created_at < before))
    return int(getattr(result, "rowcount", 0) or 0)
