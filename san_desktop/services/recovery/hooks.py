"""The product's rules that the recovery sweep runs after its own (``sweep.SweepHook``), in order: scraps whose work
stopped, TILs left inside a step, cards and TILs of another embedding model, stars of another model, files no row
names, the Trash's old entries, old change notices, and last the finished jobs to prune (the hooks before it read
the jobs it may delete)."""

from __future__ import annotations

import logging
from contextlib import suppress
from datetime import timedelta

from sqlalchemy.orm import Session

from san_desktop.ai.factory import ProviderSource
from san_desktop.core.enums import JobType
from san_desktop.db.changes import prune_notices
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload
from san_desktop.queue.store import SWEEP_HOOK_BATCH, JobStore
from san_desktop.services.artifact_stores import artifact_store
from san_desktop.services.card_analysis import stale_embeddings
from san_desktop.services.recovery.sweep import SweepHook
from san_desktop.services.root import Services
from san_desktop.services.scraps import orphan_hook, remember_stopped_work
from san_desktop.services.stars import account_id
from san_desktop.services.til import TilService
from san_desktop.services.til_index import request_indexing, stale_summaries
from san_desktop.services.til_state import settle_stopped_hook
from san_desktop.services.trash import purge_hook

log = logging.getLogger(__name__)

NOTICE_RETENTION = timedelta(days=1)
# finished jobs deleted by one sweep at most: one short transaction, so the app's other writers wait little
PRUNE_BATCH = 5_000


def product_hooks(services: Services, providers: ProviderSource) -> list[SweepHook]:
    """The product's hooks, on the application's own services and provider."""
    return [
        orphan_hook,
        settle_stopped_hook,  # TILs whose job stopped (as the sweep may just have done)
        stale_embedding_hook(providers),
        stale_til_hook(providers),
        moved_stars_hook(providers, services),
        orphan_artifacts_hook,
        purge_hook(lambda: services.settings().trash.keep_days, services.changelog),
        old_notices_hook,
        prune_hook,  # last: the hooks before it read the jobs it may delete
    ]


def prune_hook(session: Session, queue: JobStore) -> int:
    """Finished jobs older than the settings keep them go (``JobStore.prune``), once the scraps whose work
    stopped say so themselves (the orphan rule reads that, not the job rows)."""
    remember_stopped_work(session)
    pruned = queue.prune(session, PRUNE_BATCH)
    if pruned:
        log.info("Pruned %d finished jobs", pruned)
    return 0  # (nothing enqueued: one batch a sweep)


def old_notices_hook(session: Session, queue: JobStore) -> int:
    """Change notices are news for open windows within seconds; a day later they are only clutter."""
    prune_notices(session, queue.clock() - NOTICE_RETENTION)
    return 0


def orphan_artifacts_hook(session: Session, queue: JobStore) -> int:
    """Files of runs that died between writing and publishing: removed once no row references them and
    they are a day old (a live run publishes long before). Reports what it removed in the log."""
    artifact_store(queue.db).sweep_orphans(TilService.referenced(session))
    return 0


def stale_embedding_hook(providers: ProviderSource) -> SweepHook:
    """Cards embedded with another model than the configured one are re-embedded through jobs."""

    def hook(session: Session, queue: JobStore) -> int:
        count = 0
        for scrap_id in stale_embeddings(session, providers.embedding_model(), SWEEP_HOOK_BATCH):
            with suppress(DuplicateJobError):
                queue.enqueue(
                    JobType.CARD_ANALYSIS,
                    scrap_id,
                    session=session,
                    payload=dump_payload(CardAnalysisPayload(embed_only=True)),
                )
                count += 1
        return count

    return hook


def stale_til_hook(providers: ProviderSource) -> SweepHook:
    """Days whose TIL has no vector of the configured model (or of its current version) are indexed."""

    def hook(session: Session, queue: JobStore) -> int:
        stale = stale_summaries(session, providers.embedding_model(), SWEEP_HOOK_BATCH)
        for summary_id in stale:
            request_indexing(session, queue, summary_id)
        return len(stale)

    return hook


def moved_stars_hook(providers: ProviderSource, services: Services) -> SweepHook:
    """Starred repositories embedded by another model are embedded again, by a ranking, in the background."""

    def hook(session: Session, _queue: JobStore) -> int:
        account = account_id(services.settings().github.api_url)
        return int(services.stars.request_reembedding(session, account, providers.embedding_model()))

    return hook
