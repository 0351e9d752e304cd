"""The product's job processors (plain code run on worker threads) and the registry that holds them.

Each loads its target first (a deleted or missing target fails the job with "Target data not found
(Already deleted)", without retry), calls the AI outside any transaction, and publishes its result in
one short transaction that also completes the job, so running a job twice never makes two cards.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import DEFAULT_CATEGORIES, AIProvider, CardDraft, embedding_text
from san_desktop.ai.factory import ProviderSource
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.core.failpoints import pause_here
from san_desktop.core.settings import (
    GitHubSettings,
)
from san_desktop.db.changes import prune_notices
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, KnowledgeCard, Scrap
from san_desktop.jobs.commit import TilCommitProcessor
from san_desktop.jobs.fetch import PageFetchProcessor
from san_desktop.jobs.quiz import QuizGenerationProcessor
from san_desktop.jobs.recovery import SweepHook
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.stars import StarRankProcessor, StarSyncProcessor, moved_stars_hook
from san_desktop.jobs.til import TilGenerationProcessor
from san_desktop.jobs.til_index import TilIndexingProcessor, stale_til_hook
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.job_queue import SWEEP_HOOK_BATCH
from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload, load_payload
from san_desktop.queue.store import JobStore
from san_desktop.services.artifact_stores import artifact_store
from san_desktop.services.card_edits import kept_edits
from san_desktop.services.cards import mark_embedding_stale, save_card, save_embedding
from san_desktop.services.root import Services
from san_desktop.services.scraps import ScrapTrashedError, orphan_hook, remember_stopped_work
from san_desktop.services.til import TilService
from san_desktop.services.til_state import settle_stopped_hook
from san_desktop.services.trash import purge_hook


@dataclass(frozen=True)
class ScrapText:
    content: str
    refined: str | None
    title: str | None = None  # a link's page title (a link not fetched has only its address and this)

    @property
    def best(self) -> str:
        text = self.refined or self.content
        if self.title and self.title not in text.lstrip().split("\n", 1)[0]:
            return f"# {self.title}\n\n{text}"
        return text


# built once: building a statement cost five times executing it
_SCRAP_TEXT = sa.select(Scrap.content, Scrap.refined_content, Scrap.title, Scrap.deleted_at).where(
    Scrap.id == sa.bindparam("scrap")
)
_SCRAP_DELETED_AT = sa.select(Scrap.deleted_at).where(Scrap.id == sa.bindparam("scrap"))
_REFINE_SCRAP = (
    sa.update(Scrap)
    .where(Scrap.id == sa.bindparam("scrap"), Scrap.deleted_at.is_(None))
    .values(refined_content=sa.bindparam("refined"))
)


def load_scrap(db: Database, scrap_id: str) -> ScrapText:
    with db.engine.connect() as conn:
        row = conn.execute(_SCRAP_TEXT, {"scrap": scrap_id}).first()
    if row is None:
        raise TargetNotFoundError(f"scrap {scrap_id}")
    if row.deleted_at is not None:
        raise ScrapTrashedError(scrap_id)
    return ScrapText(row.content, row.refined_content, row.title)


class CardAnalysisProcessor:
    """CARD_ANALYSIS (target: scrap id): title, summary, tags, category and embedding.
    With payload ``{"embed_only": true}`` it only re-embeds the existing card (embedding model changed, or
    a person edited its words). The fields a person edited are kept (and embedded) unless the payload says
    to replace them. A card edited while its job ran gets a vector of its words by a second job."""

    def __init__(self, providers: ProviderSource) -> None:
        self.providers = providers

    def __call__(self, context: JobContext) -> None:
        scrap_id = context.job.target_id
        text = load_scrap(context.db, scrap_id)
        payload = load_payload(CardAnalysisPayload, context.job.payload)
        with self.providers.lease() as provider:  # the same provider for the whole job, whatever settings do
            if payload.embed_only:
                self._reembed(context, provider, scrap_id, text)
            else:
                self._analyse(context, provider, scrap_id, text, payload)

    def _analyse(
        self, context: JobContext, provider: AIProvider, scrap_id: str, text: ScrapText, payload: CardAnalysisPayload
    ) -> None:
        draft = provider.analyze_card(text.best, DEFAULT_CATEGORIES)
        context.raise_if_cancelled()
        with context.db.engine.connect() as conn:
            kept = kept_edits(conn, scrap_id)
        embedded = draft if kept.replaced_by(payload) else kept.over(draft)
        vector = provider.embed([embedding_text(embedded.title, embedded.summary, embedded.tags, text.best)])[0]
        context.raise_if_cancelled()
        with context.publish() as session:
            conn = session.connection()
            scrap = conn.execute(_SCRAP_DELETED_AT, {"scrap": scrap_id}).first()
            if scrap is None:  # (gone: deleted for good meanwhile)
                raise TargetNotFoundError(f"scrap {scrap_id} was deleted")
            if scrap.deleted_at is not None:  # (in the Trash: deleted, or its import undone, meanwhile)
                raise ScrapTrashedError(scrap_id)
            kept = kept_edits(conn, scrap_id)  # as they are now: an edit may have come meanwhile
            replace = kept.replaced_by(payload)
            saved = draft if replace else kept.over(draft)
            # the edited fields are the card's own (save_card keeps them); a new card's given tags are its source's
            given = kept.updated_at is None and kept.tags is not None and not replace
            card_id = save_card(
                session, scrap_id, saved, provider.embedding_model, vector, replace_edits=replace, tags_given=given
            )
            stale = _words(saved) != _words(embedded)
            if stale:
                mark_embedding_stale(conn, card_id)
        if stale:
            _embed_again(context, scrap_id)

    def _reembed(self, context: JobContext, provider: AIProvider, scrap_id: str, text: ScrapText) -> None:
        with context.db.sessions() as session:
            card = session.scalar(sa.select(KnowledgeCard).where(KnowledgeCard.scrap_id == scrap_id))
            if card is None:
                raise TargetNotFoundError(f"card of scrap {scrap_id}")
            words = (card.title, card.summary)
            tags = tuple(tag.name for tag in card.tags)
            source = embedding_text(card.title, card.summary, tags, text.best)
        vector = provider.embed([source])[0]
        with context.publish() as session:
            card_now = session.execute(
                sa.select(KnowledgeCard.id, KnowledgeCard.title, KnowledgeCard.summary).where(
                    KnowledgeCard.scrap_id == scrap_id
                )
            ).first()
            if card_now is None:
                raise TargetNotFoundError(f"card of scrap {scrap_id}")
            save_embedding(session, card_now.id, provider.embedding_model, vector)
            stale = (card_now.title, card_now.summary) != words
            if stale:
                mark_embedding_stale(session.connection(), card_now.id)
        pause_here("card.reembedded")  # crash tests kill a library's move to a new model halfway
        if stale:
            _embed_again(context, scrap_id)


def _words(draft: CardDraft) -> tuple[str, str]:
    """What of a card its vector must follow: a new title or summary asks for a new vector."""
    return (draft.title, draft.summary)


def _embed_again(context: JobContext, scrap_id: str) -> None:
    """A new vector for a card edited while its job ran (that job is done now, so this one can wait).
    Should this never run, the card's vector is marked stale and the sweep asks for it."""
    with suppress(DuplicateJobError):  # one waits already (an analysis asked for meanwhile reads the new words)
        context.queue.enqueue(
            JobType.CARD_ANALYSIS, scrap_id, payload=dump_payload(CardAnalysisPayload(embed_only=True))
        )


class ScrapRefineProcessor:
    """SCRAP_REFINE (target: scrap id): a cleaned-up text saved beside the original."""

    def __init__(self, providers: ProviderSource) -> None:
        self.providers = providers

    def __call__(self, context: JobContext) -> None:
        scrap_id = context.job.target_id
        text = load_scrap(context.db, scrap_id)
        with self.providers.lease() as provider:
            refined = provider.refine_scrap(text.content)
        with context.publish() as session:
            # "" when refining changed nothing but blank lines: refined, and no second copy of the text kept
            kept = refined if refined and _lines(refined) != _lines(text.content) else ""
            updated = session.connection().execute(_REFINE_SCRAP, {"scrap": scrap_id, "refined": kept})
            if updated.rowcount != 1:
                if session.connection().execute(_SCRAP_DELETED_AT, {"scrap": scrap_id}).first() is not None:
                    raise ScrapTrashedError(scrap_id)  # (moved to the Trash while it was refined)
                raise TargetNotFoundError(f"scrap {scrap_id}")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


class RegistrySource(Protocol):
    """What the product's processors take from the application (the facade has all of it)."""

    @property
    def providers(self) -> ProviderSource: ...

    @property
    def services(self) -> Services: ...


def registry_for(source: RegistrySource) -> ProcessorRegistry:
    """The product's processors, on the application's own services and provider."""
    return build_registry(source.services, source.providers)


def build_registry(services: Services, providers: ProviderSource) -> ProcessorRegistry:
    """The product's processors, calling ``services`` (built once, the window's own); settings are read at
    each run (time zone, recall limit, commit target), the GitHub token only when a job needs it."""

    def github() -> GitHubSettings:
        return services.settings().github

    registry = ProcessorRegistry()
    registry.register(JobType.TIL_GITHUB_COMMIT, TilCommitProcessor(github, services.github_token))
    registry.register(JobType.CARD_ANALYSIS, CardAnalysisProcessor(providers))
    registry.register(JobType.SCRAP_REFINE, ScrapRefineProcessor(providers))
    registry.register(JobType.TIL_GENERATION, TilGenerationProcessor(providers, services))
    registry.register(JobType.RECALL_QUIZ_GENERATION, QuizGenerationProcessor(providers, services))
    registry.register(JobType.GITHUB_STAR_SYNC, StarSyncProcessor(services))
    registry.register(JobType.GITHUB_STAR_RECOMMENDATION, StarRankProcessor(providers, services))
    registry.register(JobType.PAGE_FETCH, PageFetchProcessor(services))
    registry.register(JobType.TIL_INDEXING, TilIndexingProcessor(providers))
    registry.stop_hooks.append(providers.interrupt)  # a job waiting on a slow AI server returns when the app closes
    registry.sweep_hooks.append(orphan_hook)
    registry.sweep_hooks.append(settle_stopped_hook)  # TILs whose job stopped (as the sweep may just have done)
    registry.sweep_hooks.append(stale_embedding_hook(providers))
    registry.sweep_hooks.append(stale_til_hook(providers))
    registry.sweep_hooks.append(moved_stars_hook(providers, services))
    registry.sweep_hooks.append(orphan_artifacts_hook)
    registry.sweep_hooks.append(purge_hook(lambda: services.settings().trash.keep_days, services.changelog))
    registry.sweep_hooks.append(old_notices_hook)
    registry.sweep_hooks.append(prune_hook)  # last: the hooks before it read the jobs it may delete
    return registry


log = logging.getLogger(__name__)
NOTICE_RETENTION = timedelta(days=1)
# finished jobs deleted by one sweep at most: one short transaction, so the app's other writers wait little
PRUNE_BATCH = 5_000


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


def orphan_artifacts_hook(session: Session, _queue: JobStore) -> int:
    """Files of runs that died between writing and publishing: removed once no row references them and
    they are a day old (a live run publishes long before). Reports what it removed in the log."""
    store = artifact_store(_queue.db)
    store.sweep_orphans(TilService.referenced(session))
    return 0


def stale_embedding_hook(providers: ProviderSource) -> SweepHook:
    """Cards embedded with another model than the configured one are re-embedded through jobs."""

    def hook(session: Session, queue: JobStore) -> int:
        model = providers.embedding_model()
        # a re-embedding that failed for good since the card was last saved is not tried again every
        # sweep (that loop is how the original system burned its AI budget); Retry in Jobs does it
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
        stale = session.scalars(
            sa.select(KnowledgeCard.scrap_id)
            .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
            .where(
                Scrap.deleted_at.is_(None),
                sa.or_(KnowledgeCard.embedding_model.is_(None), KnowledgeCard.embedding_model != model),
                ~failed_since,
                ~waiting,
            )
            .limit(SWEEP_HOOK_BATCH)
        ).all()
        count = 0
        for scrap_id in stale:
            try:
                queue.enqueue(
                    JobType.CARD_ANALYSIS,
                    scrap_id,
                    session=session,
                    payload=dump_payload(CardAnalysisPayload(embed_only=True)),
                )
                count += 1
            except DuplicateJobError:
                pass
        return count

    return hook
