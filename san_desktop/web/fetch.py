"""Downloading a scrapped link's page, within bounds (issue 16): http and https only (every redirect
checked too), at most ``MAX_REDIRECTS`` redirects, a timeout per read and for the whole download, a size
limit enforced while reading (a missing or lying Content-Length changes nothing), and only ``text/html``
or ``text/plain``. Each failure says why in a sentence: 404, timeout, not a web page, too large.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from san_desktop import __version__
from san_desktop.core.errors import PermanentError, TransientError
from san_desktop.core.text import format_size

MAX_REDIRECTS = 5
ACCEPTED_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
USER_AGENT = f"SAN-Desktop/{__version__} (local-first learning companion; fetches pages its user scrapped)"
_REDIRECTS = {301, 302, 303, 307, 308}


class PageFetchError(PermanentError):
    """The page cannot be had by asking again: 404, not a web page, too large, a redirect loop."""


class PageUnreachableError(TransientError):
    """The page may come later: a timeout, a refused connection, a server error."""


@dataclass(frozen=True)
class Download:
    url: str  # after redirects
    content_type: str  # without parameters, lower case
    charset: str | None
    body: bytes


def download(
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    between_reads: Callable[[], None] = lambda: None,
    transport: httpx.BaseTransport | None = None,
) -> Download:
    """The body of ``url`` (an http or https address). ``between_reads`` is called after every piece
    read: it may raise to stop (a cancelled job)."""
    deadline = time.monotonic() + timeout * 3  # the whole download; each read also has ``timeout``
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"}
    with httpx.Client(
        timeout=httpx.Timeout(timeout), follow_redirects=False, headers=headers, transport=transport
    ) as client:
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            _check_scheme(current, redirected=current != url)
            try:
                with client.stream("GET", current) as response:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        current = urljoin(current, response.headers["location"])
                        continue
                    _check_status(response)
                    content_type, charset = _content_type(response)
                    body = _read_body(response, max_bytes, deadline, timeout, between_reads)
                    return Download(str(response.url), content_type, charset, body)
            except httpx.TimeoutException as exc:
                raise PageUnreachableError(f"The page did not answer within {timeout:g} s.") from exc
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                host = urlsplit(current).hostname or current
                raise PageUnreachableError(f"Could not reach {host}: {exc or type(exc).__name__}.") from exc
        raise PageFetchError(f"The page redirects more than {MAX_REDIRECTS} times (a redirect loop?).")


def _check_scheme(url: str, *, redirected: bool) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        where = "redirects to" if redirected else "is"
        raise PageFetchError(
            f"The link {where} a {scheme or 'relative'}: address; only http and https pages are fetched."
        )


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if status < 300:
        return
    if status in (404, 410):
        raise PageFetchError(f"The page was not found (HTTP {status}).")
    if status == 429 or status >= 500 or status == 408:
        raise PageUnreachableError(f"The server could not give the page now (HTTP {status}).")
    if status in (401, 403):
        raise PageFetchError(f"The page needs a login or is forbidden (HTTP {status}).")
    raise PageFetchError(f"The server refused the page (HTTP {status}).")


def _content_type(response: httpx.Response) -> tuple[str, str | None]:
    header = response.headers.get("content-type", "")
    content_type = header.split(";", 1)[0].strip().lower()
    if content_type and content_type not in ACCEPTED_TYPES:
        raise PageFetchError(
            f"The link is not a web page ({content_type}); only HTML and plain-text pages are scrapped."
        )
    return content_type or "text/html", response.charset_encoding


def _read_body(
    response: httpx.Response, max_bytes: int, deadline: float, timeout: float, between_reads: Callable[[], None]
) -> bytes:
    too_large = f"The page is larger than {format_size(max_bytes)} (change capture.fetch_max_bytes in settings)."
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise PageFetchError(too_large)
    body = bytearray()
    for chunk in response.iter_bytes():  # decompressed: the limit holds for what a gzip bomb unpacks to
        body += chunk
        if len(body) > max_bytes:
            raise PageFetchError(too_large)
        if time.monotonic() > deadline:
            raise PageUnreachableError(f"The page took longer than {timeout * 3:g} s to download.")
        between_reads()
    return bytes(body)
