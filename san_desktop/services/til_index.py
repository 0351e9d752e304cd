"""A day's TIL in search and in the cards' vector space: its current text in the word index ``til_search``
and its vector in ``til_embeddings`` (revision 0015), both for the version that is current.

A generated version is indexed in the transaction that publishes it (the generation made its vector); an
edited version, a TIL of an earlier model (a library that moved to the sentence encoder) or one indexed
before revision 0015 is indexed by a TIL_INDEXING job, which the edit asks for and the recovery sweep asks
for whatever it finds stale (``stale_summaries``).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.db.models import AsyncJob, DailySummary, TilEmbedding, TilVersion
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.store import JobStore

if TYPE_CHECKING:  # numpy loads with the vectors (the TIL page imports this module: not before the first frame)
    from san_desktop.ai.base import Vectors as Vector


@dataclass(frozen=True)
class TilText:
    """The current version of a day's TIL, as indexing reads it."""

    summary_id: str
    local_date: str
    version: int
    title: str
    artifact_key: str


def current_text(session: Session, summary_id: str) -> TilText | None:
    """The day's current version (None: the day is gone or has no text yet)."""
    row = session.execute(
        sa.select(DailySummary.local_date, DailySummary.title, TilVersion.version, TilVersion.artifact_key)
        .join(TilVersion, TilVersion.summary_id == DailySummary.id)
        .where(DailySummary.id == summary_id, TilVersion.version == DailySummary.current_version)
    ).first()
    if row is None:
        return None
    return TilText(summary_id, row.local_date, row.version, row.title or "", row.artifact_key)


def save_index(session: Session, summary_id: str, text: TilText, markdown: str, model_id: str, vector: Vector) -> bool:
    """The day's text (``text``'s version, its words ``markdown``) into search and its vector, in the indexing job's
    completing transaction, unless the day was edited meanwhile: then False (the edit could not ask for indexing
    while the job ran: the caller asks, for the newer text)."""
    version = session.scalar(sa.select(DailySummary.current_version).where(DailySummary.id == summary_id))
    if version != text.version:
        return False
    index_text(session, summary_id, text.version, text.title, markdown)
    save_vector(session, summary_id, text.version, model_id, vector)
    return True


def index_text(session: Session, summary_id: str, version: int, title: str, markdown: str) -> None:
    """The day's row of the word index, replaced by this version's (SQLite's FTS5; a table with its words
    on PostgreSQL, revision 0020)."""
    session.execute(sa.text("DELETE FROM til_search WHERE summary_id = :summary"), {"summary": summary_id})
    session.execute(
        sa.text("INSERT INTO til_search (summary_id, version, title, body) VALUES (:summary, :version, :title, :body)"),
        {"summary": summary_id, "version": version, "title": title, "body": markdown},
    )


def save_vector(session: Session, summary_id: str, version: int, model_id: str, vector: Vector) -> None:
    """The day's vector (one per day: the current version's in the current model's space)."""
    from san_desktop.db.vectors import to_stored

    row = session.get(TilEmbedding, summary_id)
    if row is None:
        row = TilEmbedding(summary_id=summary_id)
        session.add(row)
    row.version, row.model_id, row.dim, row.vector = version, model_id, int(vector.shape[0]), to_stored(vector)


def request_indexing(session: Session, queue: JobStore, summary_id: str) -> None:
    """Ask for the day to be indexed again (in the caller's transaction); one waiting already will read
    the day as it is when it runs. A job that runs now notices a newer version before it publishes."""
    with suppress(DuplicateJobError):
        queue.enqueue(JobType.TIL_INDEXING, summary_id, session=session)


def stale_summaries(session: Session, model_id: str, limit: int) -> list[str]:
    """Days whose current version has no vector in ``model_id``'s space (or one of an older version), with
    no indexing waiting and none failed for good since the day last changed (Retry in Jobs does that)."""
    embedded = sa.exists().where(
        TilEmbedding.summary_id == DailySummary.id,
        TilEmbedding.version == DailySummary.current_version,
        TilEmbedding.model_id == model_id,
    )
    busy = sa.exists().where(
        AsyncJob.target_id == DailySummary.id,
        AsyncJob.job_type.in_([JobType.TIL_INDEXING, JobType.TIL_GENERATION]),
        AsyncJob.status.in_(ACTIVE_JOB_STATUSES),
    )
    failed_since = sa.exists().where(
        AsyncJob.target_id == DailySummary.id,
        AsyncJob.job_type == JobType.TIL_INDEXING,
        AsyncJob.status == JobStatus.FAILED,
        AsyncJob.created_at > DailySummary.updated_at,
    )
    query = (
        sa.select(DailySummary.id)
        .where(DailySummary.current_version.is_not(None), ~embedded, ~busy, ~failed_since)
        .order_by(DailySummary.local_date.desc())
        .limit(limit)
    )
    return list(session.scalars(query))


def til_vectors(session: Session, model_id: str, since: date | None = None) -> list[tuple[str, str, Vector]]:
    """(summary id, day, vector) of the days with a vector in ``model_id``'s space, oldest day first."""
    from san_desktop.db.vectors import from_stored

    query = (
        sa.select(DailySummary.id, DailySummary.local_date, TilEmbedding.vector, TilEmbedding.dim)
        .join(TilEmbedding, TilEmbedding.summary_id == DailySummary.id)
        .where(TilEmbedding.model_id == model_id)
        .order_by(DailySummary.local_date)
    )
    if since is not None:
        query = query.where(DailySummary.local_date >= since.isoformat())
    return [(row.id, row.local_date, from_stored(row.vector, row.dim)) for row in session.execute(query)]


@dataclass(frozen=True)
class TilSummary:
    summary_id: str
    local_date: str
    title: str


def summaries_of(session: Session, summary_ids: Sequence[str]) -> dict[str, TilSummary]:
    if not summary_ids:
        return {}
    rows = session.execute(
        sa.select(DailySummary.id, DailySummary.local_date, DailySummary.title).where(
            DailySummary.id.in_(summary_ids), DailySummary.current_version.is_not(None)
        )
    )
    return {row.id: TilSummary(row.id, row.local_date, row.title or "") for row in rows}
