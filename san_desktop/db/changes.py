"""Change notices between processes (the ``change_notices`` table): recorded inside the writing
transaction, read by other processes by id."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.timeutil import utcnow
from san_desktop.db.models import ChangeNotice

# the kind of notice of a card a person edited (its item: the card's scrap, as the pages know cards by it)
CARD_NOTICE = "card"


class ChangeLog:
    """Notices written by one process (``origin``)."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def record(self, session: Session, kind: str, item_ids: Iterable[str]) -> None:
        now = utcnow()
        session.add_all(ChangeNotice(origin=self.origin, kind=kind, item_id=item, created_at=now) for item in item_ids)

    def newest_id(self, session: Session) -> int:
        return int(session.scalar(sa.select(sa.func.coalesce(sa.func.max(ChangeNotice.id), 0))) or 0)

    def since(self, session: Session, after_id: int, limit: int = 1000) -> tuple[int, list[tuple[str, str]]]:
        """(newest id read, [(kind, item id)]) of other processes' notices above ``after_id``."""
        rows = session.execute(
            sa.select(ChangeNotice.id, ChangeNotice.origin, ChangeNotice.kind, ChangeNotice.item_id)
            .where(ChangeNotice.id > after_id)
            .order_by(ChangeNotice.id)
            .limit(limit)
        ).all()
        newest = rows[-1].id if rows else after_id
        return newest, [(row.kind, row.item_id) for row in rows if row.origin != self.origin]


def prune_notices(session: Session, before: datetime) -> int:
    result = session.execute(sa.delete(ChangeNotice).where(ChangeNotice.created_at < before))
    return int(getattr(result, "rowcount", 0) or 0)
