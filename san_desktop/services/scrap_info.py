"""What a scrap is now, as the Inbox and ``san scrap list`` show it: its text, its card, and the state of its
newest analysis, refinement and page fetch (one query per kind for a page of scraps)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.enums import JobStatus, JobType, SourceType
from san_desktop.db.models import AsyncJob, KnowledgeCard, Scrap


@dataclass(frozen=True)
class ScrapInfo:
    id: str
    source_type: SourceType
    source_ref: str | None
    content: str
    refined: bool
    created_at: datetime
    deleted: bool
    card_id: str | None
    card_title: str | None
    analysis_status: JobStatus | None  # of the newest CARD_ANALYSIS job
    analysis_error: str | None
    analysis_job_id: str | None
    refine_status: JobStatus | None
    refine_error: str | None = None
    refine_job_id: str | None = None
    analysis_run_after: datetime | None = None  # a waiting retry's time
    refine_run_after: datetime | None = None
    title: str | None = None  # a link's page title
    fetch_status: JobStatus | None = None  # of the newest PAGE_FETCH job (links only)
    fetch_error: str | None = None
    fetch_job_id: str | None = None
    fetch_run_after: datetime | None = None

    @property
    def awaiting_page(self) -> bool:
        """A link whose page has not been fetched (its text is still the address)."""
        return self.source_type is SourceType.URL and self.content == self.source_ref


def scrap_infos(session: Session, ids: list[str]) -> list[ScrapInfo]:
    """What the Inbox shows of the scraps ``ids`` (those that exist, in that order), with the state of
    their newest analysis, refinement and page fetch."""
    if not ids:
        return []
    scraps = {s.id: s for s in session.scalars(sa.select(Scrap).where(Scrap.id.in_(ids)))}
    cards = {
        row.scrap_id: (row.id, row.title)
        for row in session.execute(
            sa.select(KnowledgeCard.scrap_id, KnowledgeCard.id, KnowledgeCard.title).where(
                KnowledgeCard.scrap_id.in_(ids)
            )
        )
    }
    newest: dict[tuple[str, JobType], tuple[JobStatus, str | None, str, datetime | None]] = {}
    for row in session.execute(
        sa.select(
            AsyncJob.target_id,
            AsyncJob.job_type,
            AsyncJob.status,
            AsyncJob.error_message,
            AsyncJob.id,
            AsyncJob.run_after,
        )
        .where(
            AsyncJob.target_id.in_(ids),
            AsyncJob.job_type.in_([JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE, JobType.PAGE_FETCH]),
        )
        .order_by(AsyncJob.id)
    ):
        newest[(row.target_id, row.job_type)] = (row.status, row.error_message, row.id, row.run_after)
    infos = []
    for scrap_id in ids:
        scrap = scraps.get(scrap_id)
        if scrap is None:
            continue
        card = cards.get(scrap_id)
        analysis = newest.get((scrap_id, JobType.CARD_ANALYSIS))
        refine = newest.get((scrap_id, JobType.SCRAP_REFINE))
        fetch = newest.get((scrap_id, JobType.PAGE_FETCH))
        infos.append(
            ScrapInfo(
                id=scrap.id,
                source_type=scrap.source_type,
                source_ref=scrap.source_ref,
                content=scrap.content,
                refined=scrap.refined_content is not None,
                created_at=scrap.created_at,
                deleted=scrap.deleted_at is not None,
                card_id=card[0] if card else None,
                card_title=card[1] if card else None,
                analysis_status=analysis[0] if analysis else None,
                analysis_error=analysis[1] if analysis else None,
                analysis_job_id=analysis[2] if analysis else None,
                refine_status=refine[0] if refine else None,
                refine_error=refine[1] if refine else None,
                refine_job_id=refine[2] if refine else None,
                analysis_run_after=analysis[3] if analysis else None,
                refine_run_after=refine[3] if refine else None,
                title=scrap.title,
                fetch_status=fetch[0] if fetch else None,
                fetch_error=fetch[1] if fetch else None,
                fetch_job_id=fetch[2] if fetch else None,
                fetch_run_after=fetch[3] if fetch else None,
            )
        )
    return infos
