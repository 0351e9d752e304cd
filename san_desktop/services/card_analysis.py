"""What the card analysis job (``jobs.processors.CardAnalysisProcessor``) reads and writes: the edits a person made
to a scrap's card (kept over a new analysis), the card's words for a new vector, and the card with its vector saved
in the job's completing transaction. The job calls the AI between them, outside any transaction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import CardDraft
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.db.changes import CARD_NOTICE, ChangeLog
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, KnowledgeCard, Scrap
from san_desktop.queue.payloads import CardAnalysisPayload
from san_desktop.services.card_edits import KeptEdits, kept_edits
from san_desktop.services.cards import mark_embedding_stale, save_card, save_embedding
from san_desktop.services.scraps import ScrapTrashedError

# built once: building a statement cost five times executing it
_SCRAP_DELETED_AT = sa.select(Scrap.deleted_at).where(Scrap.id == sa.bindparam("scrap"))


@dataclass(frozen=True)
class CardWords:
    """What a card's vector is made of: its words as they are (a new vector follows the card's own words)."""

    title: str
    summary: str
    tags: tuple[str, ...]


def words_of(draft: CardDraft) -> tuple[str, str]:
    """What of a card its vector must follow: a new title or summary asks for a new vector."""
    return (draft.title, draft.summary)


class CardAnalysis:
    """The card analysis' reads and writes of one library."""

    def __init__(self, db: Database, changelog: ChangeLog | None = None) -> None:
        self.db = db
        self.changelog = changelog  # a card made is news for other machines' windows: a notice with each

    def kept_edits(self, scrap_id: str) -> KeptEdits:
        """What a person edited on the scrap's card (``card_edits.kept_edits``), read now."""
        with self.db.engine.connect() as conn:
            return kept_edits(conn, scrap_id)

    def save_analysis(
        self,
        session: Session,
        scrap_id: str,
        draft: CardDraft,
        embedded: CardDraft,
        model_id: str,
        vector: npt.NDArray[np.float32],
        payload: CardAnalysisPayload,
    ) -> bool:
        """Save the scrap's card from ``draft`` with ``vector`` (made of ``embedded``'s words), in the job's
        completing ``session``: the fields a person edited meanwhile are kept (and the vector marked stale when
        the card's words are then not the ones embedded: True, a new vector is to be asked for). A scrap moved
        to the Trash or deleted meanwhile fails the job (``ScrapTrashedError``, ``TargetNotFoundError``)."""
        conn = session.connection()
        scrap = conn.execute(_SCRAP_DELETED_AT, {"scrap": scrap_id}).first()
        if scrap is None:  # (gone: deleted for good meanwhile)
            raise TargetNotFoundError(f"scrap {scrap_id} was deleted")
        if scrap.deleted_at is not None:  # (in the Trash: deleted, or its import undone, meanwhile)
            raise ScrapTrashedError(scrap_id)
        kept = kept_edits(conn, scrap_id)  # as they are now: an edit may have come meanwhile
        replace = kept.replaced_by(payload)
        saved = draft if replace else kept.over(draft)
        # the edited fields are the card's own (save_card keeps them); a new card's given ones are its source's
        given = kept.given_fields() if kept.updated_at is None and not replace else ()
        card_id = save_card(session, scrap_id, saved, model_id, vector, replace_edits=replace, given=given)
        stale = words_of(saved) != words_of(embedded)
        if stale:
            mark_embedding_stale(conn, card_id)
        if self.changelog is not None and self.db.shares_library:
            # (other machines hear of jobs queued and cancelled, not of their completions: the card is told;
            # a file's other processes read the jobs that changed, the card's among them)
            self.changelog.record(session, CARD_NOTICE, [scrap_id])
        return stale

    def card_words(self, scrap_id: str) -> CardWords:
        """The words of the scrap's card, to embed again."""
        with self.db.sessions() as session:
            card = session.scalar(sa.select(KnowledgeCard).where(KnowledgeCard.scrap_id == scrap_id))
            if card is None:
                raise TargetNotFoundError(f"card of scrap {scrap_id}")
            return CardWords(card.title, card.summary, tuple(tag.name for tag in card.tags))

    @staticmethod
    def save_vector(
        session: Session, scrap_id: str, model_id: str, vector: npt.NDArray[np.float32], words: CardWords
    ) -> bool:
        """Replace the scrap's card's vector (made of ``words``) in the job's completing ``session``; True when the
        card's words changed meanwhile (its vector is marked stale: a new one is to be asked for)."""
        card = session.execute(
            sa.select(KnowledgeCard.id, KnowledgeCard.title, KnowledgeCard.summary).where(
                KnowledgeCard.scrap_id == scrap_id
            )
        ).first()
        if card is None:
            raise TargetNotFoundError(f"card of scrap {scrap_id}")
        save_embedding(session, card.id, model_id, vector)
        stale = (card.title, card.summary) != (words.title, words.summary)
        if stale:
            mark_embedding_stale(session.connection(), card.id)
        return stale


def stale_embeddings(session: Session, model_id: str, limit: int) -> list[str]:
    """Scraps (at most ``limit``) whose live card was embedded with another model than ``model_id`` (or whose vector
    is stale) and waits for no re-embedding. A re-embedding that failed for good since the card was last saved is
    not tried again every sweep (that loop is how the original system burned its AI budget): Retry in Jobs does it."""
    failed_since = sa.exists().where(
        AsyncJob.target_id == KnowledgeCard.scrap_id,
        AsyncJob.job_type == JobType.CARD_ANALYSIS,
        AsyncJob.status == JobStatus.FAILED,
        AsyncJob.created_at > KnowledgeCard.updated_at,
    )
    waiting = sa.exists().where(
        AsyncJob.target_id == KnowledgeCard.scrap_id,
        AsyncJob.job_type == JobType.CARD_ANALYSIS,
        AsyncJob.status.in_(ACTIVE_JOB_STATUSES),
    )
    return list(
        session.scalars(
            sa.select(KnowledgeCard.scrap_id)
            .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
            .where(
                Scrap.deleted_at.is_(None),
                sa.or_(KnowledgeCard.embedding_model.is_(None), KnowledgeCard.embedding_model != model_id),
                ~failed_since,
                ~waiting,
            )
            .limit(limit)
        ).all()
    )
