"""Everything the window talks to, built once at start-up (and by tests, with their own settings)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QRunnable, QThreadPool

from san_desktop.ai.factory import ProviderSource, embedding_model_of
from san_desktop.bootstrap import Backend
from san_desktop.core.settings import Settings, save_settings
from san_desktop.db.vectors import warm_up
from san_desktop.jobs.processors import build_registry
from san_desktop.jobs.registry import ProcessorRegistry
from san_desktop.jobs.runner import JobRunner
from san_desktop.queue.job_queue import JobQueue
from san_desktop.services.scraps import ScrapService
from san_desktop.services.secrets import ai_api_key

log = logging.getLogger(__name__)


@dataclass
class AppContext:
    backend: Backend
    settings: Settings
    providers: ProviderSource
    runner: JobRunner
    scraps: ScrapService

    @property
    def queue(self) -> JobQueue:
        return self.runner.queue

    def apply_settings(self, settings: Settings) -> None:
        """Save new settings and put them to use (the AI provider is rebuilt on its next job)."""
        save_settings(self.backend.data_dir, settings)
        embedding_changed = self.providers.embedding_model() != embedding_model_of(settings.ai)
        self.settings = settings
        self.providers.update(settings.ai)
        self.scraps.max_bytes = settings.capture.max_bytes
        if embedding_changed:
            self.runner.run_sweep_now()  # its hook re-embeds cards of the old model, through jobs

    def with_capture(self, **changes: Any) -> Settings:
        return replace(self.settings, capture=replace(self.settings.capture, **changes))


class _WarmUp(QRunnable):
    """Loads the similar-card index into memory on a pool thread, so the first similar-cards query on
    the GUI thread is quick even with 100,000 cards."""

    def __init__(self, context: AppContext) -> None:
        super().__init__()
        self.db = context.backend.db
        self.model = context.providers.embedding_model()

    def run(self) -> None:
        try:
            with self.db.engine.connect() as conn:
                loaded = warm_up(conn, self.model)
            log.info("Similar-card index ready (%d cards)", loaded)
        except Exception:
            log.exception("Could not preload the similar-card index; it loads on first use")


def warm_up_similar_cards(context: AppContext) -> None:
    QThreadPool.globalInstance().start(_WarmUp(context))


def build_context(backend: Backend, settings: Settings, registry: ProcessorRegistry | None = None) -> AppContext:
    providers = ProviderSource(settings.ai, api_key=ai_api_key)
    queue = JobQueue(backend.db, settings.jobs)
    runner = JobRunner(queue, registry or build_registry(providers), backend.session_id, settings.jobs)
    scraps = ScrapService(backend.db, queue, settings.capture.max_bytes)
    return AppContext(backend, settings, providers, runner, scraps)
