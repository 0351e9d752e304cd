"""TIL_INDEXING (target: daily summary id): the day's current TIL text into search and its vector into the
configured model's space (``services.til_index``). Asked for by an edit and by the recovery sweep (a TIL of
an earlier model, or of before search covered TILs); a generated version is indexed when it is published.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.factory import ProviderSource
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.db.models import DailySummary
from san_desktop.jobs.recovery import SweepHook
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.job_queue import SWEEP_HOOK_BATCH
from san_desktop.queue.store import JobStore
from san_desktop.services.til_index import current_text, index_text, request_indexing, save_vector, stale_summaries


class TilIndexingProcessor:
    def __init__(self, providers: ProviderSource) -> None:
        self.providers = providers

    def __call__(self, context: JobContext) -> None:
        summary_id = context.job.target_id
        with context.db.sessions() as session:
            text = current_text(session, summary_id)
        if text is None:
            raise TargetNotFoundError(f"the TIL text of daily summary {summary_id}")
        markdown = context.files.store.read_text(text.artifact_key)
        with self.providers.lease() as provider:
            vector = provider.embed([markdown])[0]
            model = provider.embedding_model
        context.raise_if_cancelled()
        with context.publish() as session:
            version = session.scalar(sa.select(DailySummary.current_version).where(DailySummary.id == summary_id))
            edited_meanwhile = version != text.version
            if not edited_meanwhile:
                index_text(session, summary_id, text.version, text.title, markdown)
                save_vector(session, summary_id, text.version, model, vector)
        if edited_meanwhile:  # the edit could not ask while this job ran: asked now, for the newer text
            with context.db.write() as session:
                request_indexing(session, context.queue, summary_id)


def stale_til_hook(providers: ProviderSource) -> SweepHook:
    """Days whose TIL has no vector of the configured model (or of its current version) are indexed."""

    def hook(session: Session, queue: JobStore) -> int:
        stale = stale_summaries(session, providers.embedding_model(), SWEEP_HOOK_BATCH)
        for summary_id in stale:
            request_indexing(session, queue, summary_id)
        return len(stale)

    return hook
