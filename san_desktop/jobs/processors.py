"""The product's job processors (plain code run on worker threads) and the registry that holds them.

Each loads its target first (a deleted or missing target fails the job with "Target data not found
(Already deleted)", without retry), calls the AI outside any transaction, and publishes its result in
one short transaction that also completes the job, so running a job twice never makes two cards.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Protocol

from san_desktop.ai.base import DEFAULT_CATEGORIES, AIProvider, embedding_text
from san_desktop.ai.factory import ProviderSource
from san_desktop.core.enums import JobType
from san_desktop.core.failpoints import pause_here
from san_desktop.core.settings import GitHubSettings
from san_desktop.jobs.commit import TilCommitProcessor
from san_desktop.jobs.fetch import PageFetchProcessor
from san_desktop.jobs.quiz import QuizGenerationProcessor
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from san_desktop.jobs.stars import StarRankProcessor, StarSyncProcessor
from san_desktop.jobs.til import TilGenerationProcessor
from san_desktop.jobs.til_index import TilIndexingProcessor
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload, load_payload
from san_desktop.services.recovery.hooks import product_hooks
from san_desktop.services.root import Services
from san_desktop.services.scraps import ScrapText


class CardAnalysisProcessor:
    """CARD_ANALYSIS (target: scrap id): title, summary, tags, category and embedding.
    With payload ``{"embed_only": true}`` it only re-embeds the existing card (embedding model changed, or
    a person edited its words). The fields a person edited are kept (and embedded) unless the payload says
    to replace them. A card edited while its job ran gets a vector of its words by a second job."""

    def __init__(self, providers: ProviderSource, services: Services) -> None:
        self.providers = providers
        self.services = services

    def __call__(self, context: JobContext) -> None:
        scrap_id = context.job.target_id
        text = self.services.scraps.text_of(scrap_id)
        payload = load_payload(CardAnalysisPayload, context.job.payload)
        with self.providers.lease() as provider:  # the same provider for the whole job, whatever settings do
            if payload.embed_only:
                self._reembed(context, provider, scrap_id, text)
            else:
                self._analyse(context, provider, scrap_id, text, payload)

    def _analyse(
        self, context: JobContext, provider: AIProvider, scrap_id: str, text: ScrapText, payload: CardAnalysisPayload
    ) -> None:
        analysis = self.services.analysis
        draft = provider.analyze_card(text.best, DEFAULT_CATEGORIES)
        context.raise_if_cancelled()
        kept = analysis.kept_edits(scrap_id)
        embedded = draft if kept.replaced_by(payload) else kept.over(draft)
        vector = provider.embed([embedding_text(embedded.title, embedded.summary, embedded.tags, text.best)])[0]
        context.raise_if_cancelled()
        with context.publish() as session:
            stale = analysis.save_analysis(
                session, scrap_id, draft, embedded, provider.embedding_model, vector, payload
            )
        if stale:
            _embed_again(context, scrap_id)

    def _reembed(self, context: JobContext, provider: AIProvider, scrap_id: str, text: ScrapText) -> None:
        analysis = self.services.analysis
        words = analysis.card_words(scrap_id)
        vector = provider.embed([embedding_text(words.title, words.summary, words.tags, text.best)])[0]
        with context.publish() as session:
            stale = analysis.save_vector(session, scrap_id, provider.embedding_model, vector, words)
        pause_here("card.reembedded")  # crash tests kill a library's move to a new model halfway
        if stale:
            _embed_again(context, scrap_id)


def _embed_again(context: JobContext, scrap_id: str) -> None:
    """A new vector for a card edited while its job ran (that job is done now, so this one can wait).
    Should this never run, the card's vector is marked stale and the sweep asks for it."""
    with suppress(DuplicateJobError):  # one waits already (an analysis asked for meanwhile reads the new words)
        context.queue.enqueue(
            JobType.CARD_ANALYSIS, scrap_id, payload=dump_payload(CardAnalysisPayload(embed_only=True))
        )


class ScrapRefineProcessor:
    """SCRAP_REFINE (target: scrap id): a cleaned-up text saved beside the original."""

    def __init__(self, providers: ProviderSource, services: Services) -> None:
        self.providers = providers
        self.services = services

    def __call__(self, context: JobContext) -> None:
        scrap_id = context.job.target_id
        text = self.services.scraps.text_of(scrap_id)
        with self.providers.lease() as provider:
            refined = provider.refine_scrap(text.content)
        with context.publish() as session:
            self.services.scraps.save_refined(session, scrap_id, refined, text.content)


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
    each run (time zone, recall limit, commit target), the GitHub token only when a job needs it. The recovery
    sweep's hooks are the product's (``services.recovery.hooks``)."""

    def github() -> GitHubSettings:
        return services.settings().github

    registry = ProcessorRegistry()
    registry.register(JobType.TIL_GITHUB_COMMIT, TilCommitProcessor(services.commits, github, services.github_token))
    registry.register(JobType.CARD_ANALYSIS, CardAnalysisProcessor(providers, services))
    registry.register(JobType.SCRAP_REFINE, ScrapRefineProcessor(providers, services))
    registry.register(JobType.TIL_GENERATION, TilGenerationProcessor(providers, services))
    registry.register(JobType.RECALL_QUIZ_GENERATION, QuizGenerationProcessor(providers, services))
    registry.register(JobType.GITHUB_STAR_SYNC, StarSyncProcessor(services))
    registry.register(JobType.GITHUB_STAR_RECOMMENDATION, StarRankProcessor(providers, services))
    registry.register(JobType.PAGE_FETCH, PageFetchProcessor(services))
    registry.register(JobType.TIL_INDEXING, TilIndexingProcessor(providers))
    registry.stop_hooks.append(providers.interrupt)  # a job waiting on a slow AI server returns when the app closes
    registry.sweep_hooks.extend(product_hooks(services, providers))
    return registry
