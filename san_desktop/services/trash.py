"""The Trash (DESIGN.md §12): every delete of scraps moves them here, and nothing else deletes them.

What is deleted together is one entry (``trash_entries``): one scrap, several deleted at once, or the scraps an
import brought in when it is undone. Its scraps keep their cards, the person's edits, quizzes and review
history; ``scraps.deleted_at`` hides them from every list, search, recall, quiz queue and export (those read
live scraps only), and frees their content: the same text scrapped again is a new scrap, and the copy in the
Trash stays there (restoring it while the new one lives would make two, so that one copy stays in the Trash and
the rest of its entry comes back). Their waiting and running jobs are cancelled (a job that finds its scrap in
the Trash ends cancelled, never failed); restoring asks again for the work that the delete stopped.

An entry goes for good when the Trash is emptied, or ``trash.keep_days`` after it was deleted (the recovery
sweep's ``purge_hook``, on either database), with its cards' vectors, jobs, and the tags and categories
nothing uses any more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobTarget, TrashKind, job_types_on
from san_desktop.core.errors import SanError
from san_desktop.core.ids import new_id
from san_desktop.core.text import preview
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database, SessionOrConnection
from san_desktop.db.tables import async_jobs, import_batches, knowledge_cards, scraps, trash_entries
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.changes import Changes
from san_desktop.services.recovery.sweep import SweepHook
from san_desktop.services.scrap_versions import put_back
from san_desktop.services.scraps import SCRAP_NOTICE, ScrapNotFoundError, restart_stopped_work

log = logging.getLogger(__name__)

DEFAULT_KEEP_DAYS = 30.0
PURGE_BATCH = 1_000  # scraps deleted for good in one transaction (their cards, quizzes and vectors with them)
LABEL_LENGTH = 200
SCRAP_JOB_TYPES = tuple(job_types_on(JobTarget.SCRAP))


class TrashEntryNotFoundError(SanError):
    exit_code = 5

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"There is nothing in the Trash with id {entry_id} (`san trash list` shows what is).")


@dataclass(frozen=True)
class TrashEntry:
    """One entry of the Trash, as the Trash view and ``san trash list`` show it."""

    id: str
    kind: TrashKind
    label: str  # the scrap's title or text; the first of several; the file or folder an import read
    scraps: int
    cards: int
    quizzes: int
    deleted_at: datetime
    purge_at: datetime  # when the sweep deletes it for good

    def describe(self) -> str:
        if self.kind is TrashKind.IMPORT:
            return f"{_scraps(self.scraps)} imported from {self.label}"
        if self.kind is TrashKind.SCRAPS:
            return f"{_scraps(self.scraps)}: {self.label}, …" if self.scraps > 1 else self.label
        return self.label


@dataclass(frozen=True)
class Trashed:
    """What a delete moved to the Trash, and the jobs it cancelled."""

    entry_id: str | None  # None: nothing was live to delete
    scrap_ids: tuple[str, ...]
    cancelled: tuple[JobRecord, ...] = ()

    @property
    def changes(self) -> Changes:
        return Changes.of_scraps(self.scrap_ids)  # (the jobs it cancelled: the queue announces them)


@dataclass(frozen=True)
class Restored:
    entry_id: str
    scrap_ids: tuple[str, ...]
    # left in the Trash: the same content was scrapped again since (restoring would make it twice)
    kept: tuple[str, ...] = ()

    @property
    def changes(self) -> Changes:
        return Changes.of_scraps(self.scrap_ids)

    def sentence(self) -> str:
        said = f"Restored {_scraps(len(self.scrap_ids))}."
        if self.kept:
            stay = "stays" if len(self.kept) == 1 else "stay"
            said += (
                f" {_scraps(len(self.kept))} {stay} in the Trash: the same content was scrapped again since, and "
                "that newer scrap is the one kept."
            )
        return said


@dataclass(frozen=True)
class Emptied:
    entries: int
    scraps: int
    scrap_ids: tuple[str, ...] = ()

    @property
    def changes(self) -> Changes:
        return Changes.of_scraps(self.scrap_ids)

    def sentence(self, *, dry_run: bool = False) -> str:
        if not self.entries:
            return "The Trash is empty."
        return f"{'Would delete' if dry_run else 'Deleted'} {self._what()} for good."

    def question(self) -> str:
        """The confirmation before emptying (``self``: what a dry run found)."""
        return f"Delete the {self._what()} in the Trash for good? This cannot be undone."

    def _what(self) -> str:
        items = f"{self.entries:,} item{'s' if self.entries != 1 else ''}"
        return f"{items} ({_scraps(self.scraps)} with their cards and quizzes)"


def _scraps(count: int) -> str:
    return f"{count:,} scrap{'s' if count != 1 else ''}"


class TrashService:
    """Moving scraps to the Trash, restoring, emptying and purging it. Each is one write transaction (emptying a
    large Trash: one per ``PURGE_BATCH`` scraps); other processes learn of it through change notices."""

    def __init__(
        self,
        db: Database,
        queue: JobStore,
        keep_days: Callable[[], float] = lambda: DEFAULT_KEEP_DAYS,
        changelog: ChangeLog | None = None,
    ) -> None:
        self.db = db
        self.queue = queue
        self.keep_days = keep_days
        self.changelog = changelog

    def _notice(self, conn: SessionOrConnection, scrap_ids: Sequence[str]) -> None:
        if self.changelog is not None:
            self.changelog.record(conn, SCRAP_NOTICE, scrap_ids)

    # --- moving to the Trash ------------------------------------------------------------------------------

    def delete(self, scrap_ids: Sequence[str]) -> Trashed:
        """Move live scraps to the Trash as one entry (one scrap: under the scrap's own id). A scrap that is not
        there, or in the Trash already: ``ScrapNotFoundError`` (nothing is moved)."""
        ids = list(dict.fromkeys(scrap_ids))
        if not ids:
            return Trashed(None, ())
        with self.db.write_connection() as conn:
            rows = conn.execute(
                sa.select(scraps.c.id, scraps.c.title, scraps.c.content, knowledge_cards.c.title.label("card"))
                .outerjoin(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
                .where(scraps.c.id.in_(ids), scraps.c.deleted_at.is_(None))
            ).all()
            found = {row.id: row for row in rows}
            missing = [scrap_id for scrap_id in ids if scrap_id not in found]
            if missing:
                raise ScrapNotFoundError(missing[0])
            first = found[ids[0]]
            label = preview(first.card or first.title or first.content, LABEL_LENGTH)
            single = len(ids) == 1
            entry_id = ids[0] if single else new_id()
            kind = TrashKind.SCRAP if single else TrashKind.SCRAPS
            moved = self._move(conn, entry_id, kind, label, scraps.c.id.in_(ids))
        return Trashed(entry_id, tuple(moved), self._cancel_jobs_of(entry_id))

    def undo_import(self, batch_id: str) -> Trashed:
        """Move what the import ``batch_id`` brought in (and is still live) to the Trash as one entry, and mark
        the import undone."""
        batch = import_batches.c
        with self.db.write_connection() as conn:
            row = conn.execute(sa.select(batch.source, batch.undone_at).where(batch.id == batch_id)).first()
            if row is None:
                raise SanError(f"There is no import {batch_id}.")
            if row.undone_at is not None:
                raise SanError("That import was undone already.")
            entry_id = new_id()
            moved = self._move(
                conn, entry_id, TrashKind.IMPORT, row.source, scraps.c.import_batch_id == batch_id, batch_id=batch_id
            )
            put_back(conn, self.queue, batch_id)  # what it updated gets its text from before it
            conn.execute(sa.update(import_batches).where(batch.id == batch_id).values(undone_at=self.queue.clock()))
        log.info("Undid import %s: %d scrap(s) moved to the Trash (%s)", batch_id, len(moved), entry_id)
        if not moved:
            return Trashed(None, ())
        return Trashed(entry_id, tuple(moved), self._cancel_jobs_of(entry_id))

    def _move(
        self,
        conn: sa.Connection,
        entry_id: str,
        kind: TrashKind,
        label: str,
        which: sa.ColumnElement[bool],
        *,
        batch_id: str | None = None,
    ) -> list[str]:
        now = self.queue.clock()
        conn.execute(
            sa.insert(trash_entries).values(
                id=entry_id, kind=kind, label=label[:LABEL_LENGTH], import_batch_id=batch_id, deleted_at=now
            )
        )
        moved = list(
            conn.scalars(
                sa.update(scraps)
                .where(which, scraps.c.deleted_at.is_(None))
                .values(deleted_at=now, trash_id=entry_id)
                .returning(scraps.c.id)
            )
        )
        if not moved:
            conn.execute(sa.delete(trash_entries).where(trash_entries.c.id == entry_id))
        self._notice(conn, moved)
        return moved

    def _cancel_jobs_of(self, entry_id: str) -> tuple[JobRecord, ...]:
        """Cancel the waiting and running jobs of the entry's scraps (a worker still running one drops its
        result; one that starts meanwhile finds its scrap in the Trash and ends cancelled too)."""
        with self.db.engine.connect() as conn:
            job_ids = list(
                conn.scalars(
                    sa.select(async_jobs.c.id).where(
                        async_jobs.c.target_id.in_(sa.select(scraps.c.id).where(scraps.c.trash_id == entry_id)),
                        async_jobs.c.job_type.in_(SCRAP_JOB_TYPES),
                        async_jobs.c.status.in_(ACTIVE_JOB_STATUSES),
                    )
                )
            )
        return self.queue.cancel_jobs(job_ids).changed if job_ids else ()

    # --- restoring ----------------------------------------------------------------------------------------

    def restore(self, entry_id: str) -> Restored:
        """Bring an entry's scraps back with their cards, edits, quizzes and review history, and the work that
        the delete stopped (analysis, refinement, a link's page) asked for again. An import's entry makes that
        import undoable again."""
        return self._restore(entry_id, None)

    def restore_scrap(self, scrap_id: str) -> Restored:
        """Bring one scrap back out of whichever entry holds it (the rest of that entry stays)."""
        with self.db.engine.connect() as conn:
            entry_id = conn.scalar(sa.select(scraps.c.trash_id).where(scraps.c.id == scrap_id))
            deleted = conn.scalar(sa.select(scraps.c.deleted_at).where(scraps.c.id == scrap_id))
        if deleted is None:
            raise ScrapNotFoundError(scrap_id)
        return self._restore(entry_id or scrap_id, scrap_id)

    def _restore(self, entry_id: str, only: str | None) -> Restored:
        live = scraps.alias("live")
        scrapped_again = (
            sa.exists()
            .where(
                live.c.source_type == scraps.c.source_type,
                live.c.content_hash == scraps.c.content_hash,
                live.c.deleted_at.is_(None),
            )
            .correlate(scraps)
        )
        with self.db.write_connection() as conn:
            entry = conn.execute(
                sa.select(trash_entries.c.kind, trash_entries.c.import_batch_id).where(trash_entries.c.id == entry_id)
            ).first()
            in_entry = scraps.c.trash_id == entry_id if entry is not None else scraps.c.id == (only or entry_id)
            if only is not None:
                in_entry = sa.and_(in_entry, scraps.c.id == only)
            chosen = sa.and_(in_entry, scraps.c.deleted_at.is_not(None))
            kept = list(conn.scalars(sa.select(scraps.c.id).where(chosen, scrapped_again)))
            back = list(conn.scalars(sa.select(scraps.c.id).where(chosen, ~scrapped_again)))
            if not back and not kept:
                if only is not None:
                    raise ScrapNotFoundError(only)
                raise TrashEntryNotFoundError(entry_id)
            if not back:
                raise SanError(
                    "The same content was scrapped again since it was deleted: that newer scrap is the one kept, "
                    "and this copy stays in the Trash."
                )
            # (before the scraps are live: the jobs the delete cancelled are told apart by their time)
            restart_stopped_work(conn, self.queue, back)
            for start in range(0, len(back), PURGE_BATCH):
                chunk = back[start : start + PURGE_BATCH]
                conn.execute(sa.update(scraps).where(scraps.c.id.in_(chunk)).values(deleted_at=None, trash_id=None))
            remaining = conn.scalar(sa.select(sa.func.count()).select_from(scraps).where(scraps.c.trash_id == entry_id))
            if not remaining:
                conn.execute(sa.delete(trash_entries).where(trash_entries.c.id == entry_id))
            if entry is not None and entry.import_batch_id is not None:
                conn.execute(
                    sa.update(import_batches).where(import_batches.c.id == entry.import_batch_id).values(undone_at=None)
                )
            self._notice(conn, back)
        log.info("Restored %d scrap(s) from the Trash (%s); %d stay", len(back), entry_id, len(kept))
        return Restored(entry_id, tuple(back), tuple(kept))

    # --- reading ------------------------------------------------------------------------------------------

    def entries(self, *, limit: int = 500) -> list[TrashEntry]:
        """What the Trash holds, newest first."""
        entry = trash_entries.c
        counted = (
            sa.select(
                entry.id,
                entry.kind,
                entry.label,
                entry.deleted_at,
                sa.func.count(scraps.c.id).label("scraps"),
                sa.func.count(knowledge_cards.c.id).label("cards"),
            )
            .select_from(trash_entries)
            .outerjoin(scraps, scraps.c.trash_id == entry.id)
            .outerjoin(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
            .group_by(entry.id, entry.kind, entry.label, entry.deleted_at)
            .order_by(entry.deleted_at.desc(), entry.id.desc())
            .limit(limit)
        )
        from san_desktop.db.models import RecallQuiz

        keep = timedelta(days=self.keep_days())
        with self.db.engine.connect() as conn:
            rows = conn.execute(counted).all()
            quizzes: dict[str, int] = dict(
                conn.execute(
                    sa.select(scraps.c.trash_id, sa.func.count(RecallQuiz.id))
                    .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
                    .join(RecallQuiz, RecallQuiz.card_id == knowledge_cards.c.id)
                    .where(scraps.c.trash_id.in_([row.id for row in rows]))
                    .group_by(scraps.c.trash_id)
                ).all()
            )
        return [
            TrashEntry(
                id=row.id,
                kind=TrashKind(row.kind),
                label=row.label,
                scraps=int(row.scraps),
                cards=int(row.cards),
                quizzes=int(quizzes.get(row.id, 0)),
                deleted_at=row.deleted_at,
                purge_at=row.deleted_at + keep,
            )
            for row in rows
        ]

    def count(self) -> tuple[int, int]:
        """(entries, scraps) in the Trash."""
        with self.db.engine.connect() as conn:
            entries = conn.scalar(sa.select(sa.func.count()).select_from(trash_entries))
            held = conn.scalar(sa.select(sa.func.count()).select_from(scraps).where(scraps.c.deleted_at.is_not(None)))
        return int(entries or 0), int(held or 0)

    # --- deleting for good --------------------------------------------------------------------------------

    def empty(self, *, dry_run: bool = False) -> Emptied:
        """Delete everything in the Trash for good (with ``dry_run``: say how much that is)."""
        if dry_run:
            entries, held = self.count()
            return Emptied(entries, held)
        return self._purge(sa.true())

    def purge(self, now: datetime | None = None, *, limit: int | None = None) -> Emptied:
        """Delete for good what has been in the Trash longer than ``trash.keep_days`` (at most ``limit`` scraps:
        one sweep's share)."""
        cutoff = (now or self.queue.clock()) - timedelta(days=self.keep_days())
        return self._purge(trash_entries.c.deleted_at < cutoff, limit=limit)

    def _purge(self, which: sa.ColumnElement[bool], *, limit: int | None = None) -> Emptied:
        entries, gone = 0, 0
        ids: list[str] = []
        while limit is None or gone < limit:
            batch = PURGE_BATCH if limit is None else min(PURGE_BATCH, limit - gone)
            with self.db.write_connection() as conn:
                done = self.purge_batch(conn, which, batch)
            entries += done.entries
            gone += done.scraps
            ids += done.scrap_ids
            if done.scraps < batch:
                break
        if gone:
            log.info("Deleted %d scrap(s) of %d Trash entries for good", gone, entries)
        return Emptied(entries, gone, tuple(ids))

    def purge_batch(self, session: SessionOrConnection, which: sa.ColumnElement[bool], batch: int) -> Emptied:
        """In the caller's transaction (a ``Database.write_connection`` or an ORM session): delete for good up to
        ``batch`` scraps of the entries ``which`` chooses, and those entries once none of their scraps is left.
        ``entries``: the entries that went. Their jobs go through the job store, which cancels (and, once the
        caller committed, announces) those still waiting or running."""
        conn = session if isinstance(session, sa.Connection) else session.connection()
        rows = conn.execute(
            sa.select(scraps.c.id)
            .where(scraps.c.deleted_at.is_not(None), scraps.c.trash_id.in_(sa.select(trash_entries.c.id).where(which)))
            .limit(batch)
        ).all()
        ids = [row.id for row in rows]
        if ids:
            self.queue.delete_jobs_of(session, ids)
            delete_for_good(conn, ids)
            self._notice(conn, ids)
        held = sa.select(scraps.c.trash_id).where(scraps.c.trash_id.is_not(None))
        emptied = sa.and_(which, ~trash_entries.c.id.in_(held))
        entries = int(conn.scalar(sa.select(sa.func.count()).select_from(trash_entries).where(emptied)) or 0)
        if entries:
            conn.execute(sa.delete(trash_entries).where(emptied))
        return Emptied(entries, len(ids), tuple(ids))


def delete_for_good(conn: sa.Connection, scrap_ids: Sequence[str]) -> None:
    """Delete scraps with everything made from them: cards (their vectors, tags links, quizzes and reviews
    cascade), and the tags and categories their cards brought that nothing uses now. Their jobs are the job
    store's to delete first (``JobStore.delete_jobs_of``)."""
    from san_desktop.db.models import CardEmbedding, Category, KnowledgeCard, Tag, card_tags
    from san_desktop.db.vectors import unindex_card

    cards = conn.execute(
        sa.select(KnowledgeCard.id, KnowledgeCard.created_at, CardEmbedding.model_id, CardEmbedding.dim)
        .outerjoin(CardEmbedding, CardEmbedding.card_id == KnowledgeCard.id)
        .where(KnowledgeCard.scrap_id.in_(scrap_ids))
    ).all()
    for card in cards:
        if card.model_id is not None:
            unindex_card(conn, card.id, card.model_id, card.dim)
    conn.execute(sa.delete(scraps).where(scraps.c.id.in_(scrap_ids)))  # cards, tags links, quizzes cascade
    if cards:
        # names the cards brought (made with them or after) that no card has now
        since = min(card.created_at for card in cards)
        unused_tags = ~sa.exists().where(card_tags.c.tag_id == Tag.id)
        conn.execute(sa.delete(Tag).where(Tag.created_at >= since, unused_tags))
        unused_categories = ~sa.exists().where(KnowledgeCard.category_id == Category.id)
        conn.execute(sa.delete(Category).where(Category.created_at >= since, unused_categories))


def purge_hook(keep_days: Callable[[], float], changelog: ChangeLog | None = None) -> SweepHook:
    """The recovery sweep's share of the Trash: what has been there longer than ``trash.keep_days`` goes for
    good, ``PURGE_BATCH`` scraps a round, in the sweep's transaction (on either database)."""

    def hook(session: Session, queue: JobStore) -> int:
        trash = TrashService(queue.db, queue, keep_days, changelog)
        cutoff = queue.clock() - timedelta(days=keep_days())
        done = trash.purge_batch(session, trash_entries.c.deleted_at < cutoff, PURGE_BATCH)
        if done.scraps or done.entries:
            log.info("Purged %d scrap(s) kept in the Trash past %g days", done.scraps, keep_days())
        return 0  # (nothing enqueued: what is left, the next sweep takes)

    return hook
