"""TIL_INDEXING (target: daily summary id): the day's current TIL text into search and its vector into the
configured model's space (``services.til_index``). Asked for by an edit and by the recovery sweep (a TIL of
an earlier model, or of before search covered TILs); a generated version is indexed when it is published.
"""

from __future__ import annotations

from san_desktop.ai.factory import ProviderSource
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.jobs.registry import JobContext
from san_desktop.services.til_index import current_text, request_indexing, save_index


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
            indexed = save_index(session, summary_id, text, markdown, model, vector)
        if not indexed:  # the edit could not ask while this job ran: asked now, for the newer text
            with context.db.write() as session:
                request_indexing(session, context.queue, summary_id)
