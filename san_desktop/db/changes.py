"""Change notices between processes (the ``change_notices`` table): recorded inside the writing
transaction, read by other processes by id. On SQLAlchemy Core, so that a capture records its notice
without the ORM."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

import sqlalchemy as sa

from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.base import backend_of
from san_desktop.db.database import SessionOrConnection
from san_desktop.db.tables import change_notices

# the kind of notice of a card a person edited or a job made (its item: the card's scrap, as the pages know cards by it)
CARD_NOTICE = "card"


# Where ids are handed out as rows are inserted, not as their transactions commit (a server:
# ``LibraryBackend.ids_in_commit_order``), a notice with a smaller id can become visible after a greater one
# was read. A reader there remembers the ids it passed over (gaps) and asks for them again until they appear,
# or for this long (a rolled-back insert leaves a gap for good).
GAP_PATIENCE = timedelta(seconds=30)


class ChangeLog:
    """Notices written by one process (``origin``), and what it reads of the others'."""

    def __init__(self, origin: str, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.origin = origin
        self.clock = clock
        self._gaps: dict[int, datetime] = {}  # ids passed over (out of order), and since when

    def record(self, session: SessionOrConnection, kind: str, item_ids: Iterable[str]) -> None:
        now = self.clock()
        rows = [{"origin": self.origin, "kind": kind, "item_id": item, "created_at": now} for item in item_ids]
        if rows:
            session.execute(sa.insert(change_notices), rows)

    def newest_id(self, session: SessionOrConnection) -> int:
        return int(session.scalar(sa.select(sa.func.coalesce(sa.func.max(change_notices.c.id), 0))) or 0)

    def since(
        self, session: SessionOrConnection, after_id: int, limit: int = 1000
    ) -> tuple[int, list[tuple[str, str]]]:
        """(newest id read, [(kind, item id)]) of other processes' notices above ``after_id`` (where ids may
        become visible out of order, and those passed over earlier that appeared since)."""
        notices = change_notices.c
        out_of_order = not backend_of(session).ids_in_commit_order
        columns = (notices.id, notices.origin, notices.kind, notices.item_id)
        rows = list(session.execute(sa.select(*columns).where(notices.id > after_id).order_by(notices.id).limit(limit)))
        newest = rows[-1].id if rows else after_id
        if out_of_order:
            now = self.clock()
            if self._gaps:
                late = session.execute(sa.select(*columns).where(notices.id.in_(list(self._gaps)))).all()
                for row in late:
                    del self._gaps[row.id]
                rows = [*late, *rows]
                self._gaps = {gap: since for gap, since in self._gaps.items() if now - since < GAP_PATIENCE}
            found = {row.id for row in rows}
            self._gaps.update((gap, now) for gap in range(after_id + 1, newest) if gap not in found)
        return newest, [(row.kind, row.item_id) for row in rows if row.origin != self.origin]


def prune_notices(session: SessionOrConnection, before: datetime) -> int:
    result = session.execute(sa.delete(change_notices).where(change_notices.c.created_at < before))
    return int(getattr(result, "rowcount", 0) or 0)
