"""PAGE_FETCH (GitHub pool, the network pool; target: a link's scrap): download the page, take its readable
article and title, and save them on the scrap; the same transaction asks for the card and refinement.

A page that cannot be had (404, not HTML by its label or its bytes, too large even packed, a redirect loop or
one to a local address) fails at once with its reason; a timeout or a server error is tried again later.
Either way the scrap keeps its address. No download outlasts three read timeouts, so one slow site holds the
network pool no longer than that."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import sqlalchemy as sa

from san_desktop.core.errors import TargetNotFoundError
from san_desktop.db.models import Scrap
from san_desktop.jobs.registry import JobContext
from san_desktop.services.root import Services

if TYPE_CHECKING:
    from san_desktop.web.addresses import Network

log = logging.getLogger(__name__)


class PageFetchProcessor:
    def __init__(self, services: Services, network: Network | None = None) -> None:
        self.services = services
        self.network = network  # None: the system's (a test brings a made-up public internet)

    def __call__(self, context: JobContext) -> None:
        from san_desktop.web.extract import readable_page  # (httpx, trafilatura: loaded by this job only)
        from san_desktop.web.fetch import download

        scrap_id = context.job.target_id
        with context.db.sessions() as session:
            row = session.execute(sa.select(Scrap.source_ref, Scrap.deleted_at).where(Scrap.id == scrap_id)).first()
        if row is None or row.deleted_at is not None or not row.source_ref:
            raise TargetNotFoundError(f"scrap {scrap_id}")
        settings = self.services.settings().capture
        context.progress("download", 1, 2)
        page = download(
            row.source_ref,
            max_bytes=settings.fetch_max_bytes,
            timeout=settings.fetch_timeout_seconds,
            between_reads=context.raise_if_cancelled,
            network=self.network,
        )
        context.progress("read", 2, 2)
        title, text = readable_page(page)
        with context.publish() as session:
            self.services.scraps.save_page(session, scrap_id, title, text)
        log.info("Fetched the page of scrap %s: %d characters", scrap_id, len(text))
