"""PAGE_FETCH (GitHub pool, the network pool; target: a link's scrap): download the page, take its readable
article and title, and save them on the scrap; the same transaction asks for the card and refinement.

The article is read out of this process by the services' ``web.page_reader`` (the capture endpoint's reader,
with children of its own), bounded in time and memory: a page too slow or too large to read fails the fetch
for good with that sentence, and holds neither a worker past the bound nor the app's memory. A job cancelled,
or the app closing, stops the reading within a tenth of a second.

A page that cannot be had (404, not HTML by its label or its bytes, too large even packed, a redirect loop or
one to a local address, too slow or too large to read) fails at once with its reason; a timeout or a server
error is tried again later.
Either way the scrap keeps its address. No download outlasts three read timeouts, so one slow site holds the
network pool no longer than that. Pages of one site are asked for at most one a second (an imported bookmarks
file holds hundreds of one site's pages); the network pool's size bounds how many download at once."""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from san_desktop.jobs.registry import JobContext
from san_desktop.services.root import Services

if TYPE_CHECKING:
    from san_desktop.web.addresses import Network

log = logging.getLogger(__name__)

PER_HOST_SECONDS = 1.0  # between two pages of one site


class HostPacer:
    """When a download from a host may start: one every ``interval`` seconds a host, whichever thread asks.
    Addresses on this machine or its network (an IP literal that is not public, localhost) are not paced."""

    def __init__(self, interval: float = PER_HOST_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}  # host -> when its next download may start

    def reserve(self, address: str) -> float:
        """Take the next turn of ``address``'s host: how many seconds from now it starts."""
        host = (urlsplit(address).hostname or "").lower()
        if not host or _on_this_network(host):
            return 0.0
        with self._lock:
            now = self.clock()
            if len(self._next) > 1000:  # forget hosts whose turn is past
                self._next = {name: due for name, due in self._next.items() if due > now}
            start = max(now, self._next.get(host, now))
            self._next[host] = start + self.interval
            return start - now


def _on_this_network(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not address.is_global


class PageFetchProcessor:
    def __init__(self, services: Services, network: Network | None = None, pacer: HostPacer | None = None) -> None:
        self.services = services
        self.network = network  # None: the system's (a test brings a made-up public internet)
        self.pacer = pacer or HostPacer()

    def __call__(self, context: JobContext) -> None:
        from san_desktop.web.fetch import download  # (httpx: loaded by this job only)

        scrap_id = context.job.target_id
        address, content = self.services.scraps.link_of(scrap_id)
        if content != address:  # its page came meanwhile (from the browser, as the reader saw it)
            log.info("The page of scrap %s is in already: not downloaded", scrap_id)
            return
        settings = self.services.settings().capture
        self._wait_for_turn(context, address)
        context.progress("download", 1, 2)
        page = download(
            address,
            max_bytes=settings.fetch_max_bytes,
            timeout=settings.fetch_timeout_seconds,
            between_reads=context.raise_if_cancelled,
            network=self.network,
        )
        context.progress("read", 2, 2)
        title, text = self.services.page_reader.read_page(
            page.url, page.body, page.content_type, page.charset, between=context.raise_if_cancelled
        )
        with context.publish() as session:
            self.services.scraps.save_page(session, scrap_id, title, text)
        log.info("Fetched the page of scrap %s: %d characters", scrap_id, len(text))

    def _wait_for_turn(self, context: JobContext, address: str) -> None:
        """Politeness to the site: wait for its turn (a cancel is seen within a tenth of a second)."""
        wait = self.pacer.reserve(address)
        if wait <= 0:
            return
        context.progress("wait for the site", 0, 2)
        deadline = self.pacer.clock() + wait
        pause = threading.Event()
        while (left := deadline - self.pacer.clock()) > 0:
            context.raise_if_cancelled()
            pause.wait(min(left, 0.1))
