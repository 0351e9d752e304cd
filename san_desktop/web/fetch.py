"""Downloading a scrapped link's page, within bounds (issues 16 and 23): http and https only (every redirect
checked too), at most ``MAX_REDIRECTS`` redirects, never to a local address unless the user scrapped one
(``addresses``), a timeout per read and one for the whole request headers included (``connection``), a size
limit enforced while reading and while unpacking (``decode``: a missing or lying Content-Length and a
decompression bomb change nothing), and only HTML or plain text, by its label and by its bytes (``sniff``).
Each failure says why in a sentence: 404, timeout, not a web page, too large, a local address.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from san_desktop import __version__
from san_desktop.core.text import preview
from san_desktop.web.addresses import AddressGuard, Network
from san_desktop.web.connection import Deadline, GuardedTransport
from san_desktop.web.decode import ACCEPT_ENCODING, BodyDecoder, codings
from san_desktop.web.errors import PageFetchError, PageTooLargeError, PageUnreachableError
from san_desktop.web.sniff import SNIFF_BYTES, binary_kind

__all__ = ["Download", "PageFetchError", "PageUnreachableError", "download"]

MAX_REDIRECTS = 5
WHOLE_REQUEST_TIMEOUTS = 3  # the whole request may take this many read timeouts
ACCEPTED_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
USER_AGENT = f"SAN-Desktop/{__version__} (local-first learning companion; fetches pages its user scrapped)"
HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
    "Accept-Encoding": ACCEPT_ENCODING,
}
_REDIRECTS = {301, 302, 303, 307, 308}


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
    network: Network | None = None,
) -> Download:
    """The body of ``url`` (an http or https address). ``between_reads`` is called before every read: it
    may raise to stop (a cancelled job). ``network`` is the system's unless a test brings its own."""
    deadline = Deadline(timeout * WHOLE_REQUEST_TIMEOUTS)
    guard = AddressGuard(network or Network())
    cookies = httpx.Cookies()  # kept across the redirects, as a browser would
    with GuardedTransport(guard, deadline, between_reads) as transport:
        current = url
        for hop in range(MAX_REDIRECTS + 1):
            request = _request(current, redirected=hop > 0, timeout=timeout)
            cookies.set_cookie_header(request)
            try:
                response = transport.handle_request(request)
                try:
                    response.request = request  # (a transport's response has none: the cookies want it)
                    cookies.extract_cookies(response)
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        current = _joined(current, response.headers["location"])
                        continue
                    return _page(current, response, max_bytes)
                finally:
                    response.close()
            except httpx.TimeoutException as exc:
                if deadline.reached:
                    raise PageUnreachableError(
                        f"The page did not arrive within the whole-request limit of {deadline.seconds:g} s "
                        f"(three times capture.fetch_timeout_seconds); the server sent it too slowly."
                    ) from exc
                raise PageUnreachableError(f"The page did not answer within {timeout:g} s.") from exc
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                host = urlsplit(current).hostname or current
                raise PageUnreachableError(
                    f"Could not reach {host}: {str(exc).strip() or 'the connection failed'}."
                ) from exc
        raise PageFetchError(f"The page redirects more than {MAX_REDIRECTS} times (a redirect loop?).")


def _request(url: str, *, redirected: bool, timeout: float) -> httpx.Request:
    what = "The page redirects to an address" if redirected else "The link is an address"
    try:
        parts = urlsplit(url)
        if parts.scheme.lower() in ("http", "https") and (not parts.hostname or parts.port == 0):
            raise ValueError("no host or no port")
    except ValueError as exc:  # (.port checks the port's range)
        raise PageFetchError(f"{what} that is not valid ({preview(url, 200)}).") from exc
    if parts.scheme.lower() not in ("http", "https"):
        where = "redirects to" if redirected else "is"
        raise PageFetchError(
            f"The link {where} a {parts.scheme.lower() or 'relative'}: address; only http and https pages are fetched."
        )
    try:
        request = httpx.Request("GET", url, headers=HEADERS)
    except httpx.InvalidURL as exc:
        raise PageFetchError(f"{what} that is not valid ({preview(url, 200)}).") from exc
    request.extensions["timeout"] = httpx.Timeout(timeout).as_dict()
    return request


def _joined(current: str, location: str) -> str:
    try:
        return urljoin(current, location)
    except ValueError as exc:  # (an unclosed IPv6 bracket)
        raise PageFetchError(f"The page redirects to an address that is not valid ({preview(location, 200)}).") from exc


def _page(url: str, response: httpx.Response, max_bytes: int) -> Download:
    _check_status(response)
    header = response.headers.get("content-type", "")
    content_type = header.split(";", 1)[0].strip().lower()
    if content_type and content_type not in ACCEPTED_TYPES:
        raise PageFetchError(
            f"The link is not a web page ({content_type}); only HTML and plain-text pages are scrapped."
        )
    body = _read_body(response, max_bytes, content_type)
    return Download(url, content_type or "text/html", response.charset_encoding, body)


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


def _read_body(response: httpx.Response, max_bytes: int, content_type: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise PageTooLargeError(max_bytes)
    decoder = BodyDecoder(codings(response.headers.get_list("content-encoding", split_commas=True)), max_bytes)
    body = bytearray()
    received = 0
    sniffed = False
    for raw in response.iter_raw():  # as sent: unpacked here, within the limit
        received += len(raw)
        if received > max_bytes:
            raise PageTooLargeError(max_bytes)
        for piece in decoder.feed(raw):
            body += piece
            if len(body) > max_bytes:
                raise PageTooLargeError(max_bytes)
        if not sniffed and len(body) >= SNIFF_BYTES:  # a binary body is refused before the rest comes
            _check_text(bytes(body[:SNIFF_BYTES]), content_type, response.charset_encoding)
            sniffed = True
    if not sniffed:
        _check_text(bytes(body), content_type, response.charset_encoding)
    return bytes(body)


def _check_text(head: bytes, content_type: str, charset: str | None) -> None:
    kind = binary_kind(head, charset)
    if kind is not None:
        label = f", though the server calls it {content_type}" if content_type else ""
        raise PageFetchError(
            f"The link is not a web page ({kind}{label}); only HTML and plain-text pages are scrapped."
        )
