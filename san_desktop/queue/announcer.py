"""Who hears of the jobs' changes: each change is announced to the listeners once the transaction that made it
committed (seed 001: dispatch after commit), and never when it rolled back. Listeners may be called on any
thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import event

from san_desktop.db.database import Database, SessionOrConnection
from san_desktop.queue.records import Claim, JobEvent, NextClaim

if TYPE_CHECKING:  # the ORM loads when first used: a capture needs none
    from sqlalchemy.orm import Session, SessionTransaction

log = logging.getLogger(__name__)

Listener = Callable[[JobEvent], None]

# keys in Session.info for events waiting on the caller's commit
_PENDING_EVENTS = "san_pending_job_events"
_PENDING_CLAIMS = "san_pending_next_claims"
_HOOKED = "san_job_events_hooked"


class Announcer:
    """The listeners of a job store, and the events waiting on a caller's transaction for them."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()

    def add_listener(self, listener: Listener) -> None:
        with self._listeners_lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with self._listeners_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def announce(self, events: Iterable[JobEvent]) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for item in events:
            for listener in listeners:
                try:
                    listener(item)
                except Exception:
                    log.exception("A job listener failed on %s", item)

    def announce_after_commit(
        self, session: SessionOrConnection, item: JobEvent, *, claimed: tuple[NextClaim, Claim] | None = None
    ) -> None:
        """Announce ``item`` when the caller's outermost transaction commits (and hand a claim made in
        it to whoever asked for it); forget both on rollback."""
        if isinstance(session, sa.Connection):  # a Core transaction: ``write_connection`` keeps the callbacks
            Database.after_commit(session, lambda: self._on_connection_commit(item, claimed))
            return
        session.info.setdefault(_PENDING_EVENTS, []).append(item)
        if claimed is not None:
            session.info.setdefault(_PENDING_CLAIMS, []).append(claimed)
        if not session.info.get(_HOOKED):
            session.info[_HOOKED] = True
            event.listen(session, "after_commit", self._on_session_commit)
            event.listen(session, "after_soft_rollback", self._on_session_soft_rollback)

    def _on_connection_commit(self, item: JobEvent, claimed: tuple[NextClaim, Claim] | None) -> None:
        if claimed is not None:
            then, claim = claimed
            then.claim = claim
        self.announce([item])

    def _on_session_commit(self, session: Session) -> None:
        for then, claim in session.info.pop(_PENDING_CLAIMS, []):
            then.claim = claim
        self.announce(session.info.pop(_PENDING_EVENTS, []))

    @staticmethod
    def _on_session_soft_rollback(session: Session, previous: SessionTransaction) -> None:
        if previous.parent is None:  # the outermost transaction rolled back: nothing happened
            session.info.pop(_PENDING_EVENTS, None)
            session.info.pop(_PENDING_CLAIMS, None)
