"""GITHUB_STAR_SYNC (GitHub pool) fetches the starred repositories; GITHUB_STAR_RECOMMENDATION (AI pool)
ranks them. Both target the account (``services.stars.account_id``); a sync asked to rank enqueues the
ranking in its completing transaction."""

from __future__ import annotations

import logging

from san_desktop.ai.factory import ProviderSource
from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.errors import PermanentError
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.payloads import StarSyncPayload, load_payload
from san_desktop.services.root import Services

log = logging.getLogger(__name__)


class StarSyncProcessor:
    def __init__(self, services: Services) -> None:
        self.services = services

    def __call__(self, context: JobContext) -> None:
        from san_desktop.github.client import GitHubClient  # (httpx: only for the jobs that talk to GitHub)

        payload = load_payload(StarSyncPayload, context.job.payload)
        token = self.services.github_token()
        if not token:
            raise PermanentError(f"No GitHub token: {ways_to_set(GITHUB_TOKEN)}.")
        stars = self.services.stars
        settings = self.services.settings().github
        with GitHubClient(settings.api_url, token) as client:
            # pages are found one by one (Link headers): the total is not known until the last
            report = stars.sync(client, full=payload.full, on_page=lambda page: context.progress("fetch", page, page))
        log.info("Stars synced: %s", report)
        with context.publish() as session:
            if payload.rank:
                stars.request_ranking(session, context.job.target_id)


class StarRankProcessor:
    def __init__(self, providers: ProviderSource, services: Services) -> None:
        self.providers = providers
        self.services = services

    def __call__(self, context: JobContext) -> None:
        stars = self.services.stars
        with self.providers.lease() as provider:
            ranked = stars.rank(provider, self.services.settings().stars.window_days)
        context.raise_if_cancelled()
        with context.publish() as session:
            stars.store_run(session, context.run_id, ranked)
        log.info("Stars ranked: %d recommendations", len(ranked))
