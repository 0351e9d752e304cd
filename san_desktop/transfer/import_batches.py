"""The imports done, and Undo import: which batches can be undone (``ImportBatches.batches``), what undoing one
would do (``undo_preview``, the question and the dry run), and the undo itself, which moves exactly what the batch
brought in to the Trash as one entry (``services.trash``) and gives what it updated its text from before it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from san_desktop.core.errors import SanError
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database
from san_desktop.db.tables import import_batches, knowledge_cards, scrap_versions, scraps
from san_desktop.queue.store import JobStore
from san_desktop.transfer.items import ImportKind

if TYPE_CHECKING:
    from san_desktop.services.trash import Trashed


@dataclass(frozen=True)
class ImportBatchInfo:
    id: str
    kind: ImportKind
    source: str
    imported: int
    created_at: datetime
    finished: bool
    updated: int = 0


@dataclass(frozen=True)
class UndoPreview:
    """What Undo import would move to the Trash: the import's scraps still in the library, how many of their
    cards were changed since they were made, and how many have quizzes that were answered."""

    batch_id: str
    kind: ImportKind
    source: str
    created_at: datetime
    scraps: int
    edited: int
    answered: int
    updated: int = 0  # scraps an earlier import made that this one gave a new text: they get their old one back

    def question(self, when: str) -> str:
        """The confirmation Undo import asks (``when``: the import's time as the person reads it)."""
        count = f"{self.scraps:,} scrap{'s' if self.scraps != 1 else ''}"
        said = f"Move the {count} imported from {self.source} on {when} to the Trash, with their cards and quizzes?"
        if self.updated:
            said = said[:-1] + f", and give the {self.updated:,} it updated their text from before it?"
        worked: list[str] = []
        if self.edited:
            worked.append(f"{self.edited:,} of them {'were' if self.edited != 1 else 'was'} edited since the import")
        if self.answered:
            answered = "have" if self.answered != 1 else "has"
            worked.append(f"{self.answered:,} {answered} quizzes you answered")
        if worked:
            said += f"\n\n{' and '.join(worked).capitalize()}: the edits and your answers go to the Trash with them."
        else:
            said += "\n\nNone of them was edited since the import."
        return said + "\n\nOnly what that import brought in is moved. The Trash keeps it restorable for a while."

    def sentence(self) -> str:
        """What a dry run of Undo import says."""
        count = f"{self.scraps:,} scrap{'s' if self.scraps != 1 else ''}"
        said = f"Would move the {count} imported from {self.source} to the Trash"
        if self.updated:
            said += f" and give the {self.updated:,} it updated their text from before it"
        details = []
        if self.edited:
            details.append(f"{self.edited:,} edited since the import")
        if self.answered:
            details.append(f"{self.answered:,} with quizzes answered")
        return said + (f" ({', '.join(details)})." if details else ".")


class ImportBatches:
    def __init__(self, db: Database, queue: JobStore, changelog: ChangeLog | None = None) -> None:
        self.db = db
        self.queue = queue
        self.changelog = changelog

    def batches(self, limit: int | None = 20) -> list[ImportBatchInfo]:
        """The imports that can be undone, newest first (``limit`` None: all of them)."""
        batch = import_batches.c
        query = (
            sa.select(
                batch.id, batch.kind, batch.source, batch.imported, batch.created_at, batch.finished_at, batch.updated
            )
            .where(batch.undone_at.is_(None), (batch.imported > 0) | (batch.updated > 0))
            .order_by(batch.created_at.desc(), batch.id.desc())
            .limit(limit)
        )
        with self.db.engine.connect() as conn:
            return [
                ImportBatchInfo(
                    row.id,
                    ImportKind(row.kind),
                    row.source,
                    row.imported,
                    row.created_at,
                    bool(row.finished_at),
                    row.updated,
                )
                for row in conn.execute(query)
            ]

    def undo_preview(self, batch_id: str) -> UndoPreview:
        """What undoing the import ``batch_id`` would move to the Trash, and how much of it a person worked on
        since (the question before Undo import, and its dry run). Writes nothing."""
        from san_desktop.db.models import RecallQuiz, RecallQuizReview

        batch = import_batches.c
        with self.db.engine.connect() as conn:
            row = conn.execute(
                sa.select(batch.kind, batch.source, batch.created_at, batch.undone_at).where(batch.id == batch_id)
            ).first()
            if row is None:
                raise SanError(f"There is no import {batch_id}.")
            if row.undone_at is not None:
                raise SanError("That import was undone already.")
            of_batch = sa.and_(scraps.c.import_batch_id == batch_id, scraps.c.deleted_at.is_(None))
            live = conn.scalar(sa.select(sa.func.count()).select_from(scraps).where(of_batch))
            # a card changed after it was made: a person's edit, or Analyse again (its first analysis stamps
            # both times alike)
            edited = conn.scalar(
                sa.select(sa.func.count())
                .select_from(scraps)
                .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
                .where(of_batch, knowledge_cards.c.updated_at > knowledge_cards.c.created_at)
            )
            answered = conn.scalar(
                sa.select(sa.func.count(sa.distinct(scraps.c.id)))
                .select_from(scraps)
                .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
                .join(RecallQuiz, RecallQuiz.card_id == knowledge_cards.c.id)
                .join(RecallQuizReview, RecallQuizReview.quiz_id == RecallQuiz.id)
                .where(of_batch)
            )
            updated = conn.scalar(
                sa.select(sa.func.count(sa.distinct(scrap_versions.c.scrap_id))).where(
                    scrap_versions.c.import_batch_id == batch_id
                )
            )
        return UndoPreview(
            batch_id,
            ImportKind(row.kind),
            row.source,
            row.created_at,
            int(live or 0),
            int(edited or 0),
            int(answered or 0),
            int(updated or 0),
        )

    def undo(self, batch_id: str) -> Trashed:
        """Move exactly the scraps the batch brought in (those still live) to the Trash as one entry, with
        everything made from them (cards, the person's edits, quizzes and their reviews); their jobs are
        cancelled. Restoring that entry brings them all back and makes the import undoable again."""
        from san_desktop.services.trash import TrashService

        return TrashService(self.db, self.queue, changelog=self.changelog).undo_import(batch_id)
