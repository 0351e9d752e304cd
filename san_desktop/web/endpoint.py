"""The capture endpoint the browser extension talks to (as Joplin's Web Clipper talks to its ClipperServer):
HTTP on 127.0.0.1 only, on the first free port of ``PORTS``, while the app runs.

    GET  /v2/hello?nonce=N  -> {"app", "version", "protocol", "proof"}   (no token: ``web.proof``)
    POST /v2/scraps  {url, title, html, selection, kind} -> {"scrap_id": ..., "duplicate": ...}
    GET /v1/status, POST /v1/scraps -> 426 with a sentence: the extension is too old (it sent its token
                                        to whatever answered first), update it

``/v2/scraps`` needs ``Authorization: Bearer <token>``, which the extension sends only to a port whose
hello proved that it holds the token. What a web page could send is refused before anything else: a
``Host`` other than this address and port (DNS rebinding), an ``Origin`` that is a web page's rather than
an extension's. What one connection may hold is bounded in ``web.http_limits``; a page's article is read in a
child process bounded in time and memory (``web.page_reader``), so that no capture waits for another's page.
What is stored goes through ``capture``, which the app gives (no database or Qt here)."""

from __future__ import annotations

import hmac
import io
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from san_desktop import APP_NAME, __version__
from san_desktop.core.errors import KnownError, SanError, TransientError
from san_desktop.core.text import DEFAULT_MAX_CAPTURE_BYTES
from san_desktop.web.errors import PageTooLargeToReadError
from san_desktop.web.http_limits import (
    BODY_SECONDS,
    HEAD_SECONDS,
    MAX_CONNECTIONS,
    WRITE_SECONDS,
    CappedServer,
    DeadlineReader,
    RefusedRequestError,
    body_length,
)
from san_desktop.web.page_reader import PageReader
from san_desktop.web.proof import EXTENSION_VERSION, PROTOCOL, server_proof, valid_nonce

__all__ = ["PORTS", "BrowserCapture", "CaptureEndpoint", "RefusedRequestError", "parse_capture"]

PORTS = range(41730, 41740)  # documented: the extension tries these in turn
DEFAULT_MAX_BODY = 10_000_000  # a page's whole DOM; a capture keeps at most capture.max_bytes of its text
KINDS = ("page", "selection", "link")
EXTENSION_ORIGINS = ("chrome-extension://", "moz-extension://", "safari-web-extension://")
OLD_PATHS = ("/v1/status", "/v1/scraps")  # extension 0.1.x


@dataclass(frozen=True)
class BrowserCapture:
    """What the extension sent, checked; a page's article read (``text``) and its markup let go."""

    url: str
    title: str
    html: str | None
    selection: str | None
    kind: str
    text: str | None = None


Capture = Callable[[BrowserCapture], tuple[str, bool]]  # -> (scrap id, duplicate)


def parse_capture(body: bytes) -> BrowserCapture:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, f"The request is not JSON: {exc}") from exc
    except RecursionError:  # nested deeper than the parser goes: no request of the extension's is
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, "The request is nested too deeply to be read.") from None
    if not isinstance(data, dict):
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, "The request is not a JSON object.")
    kind = data.get("kind", "page")
    if kind not in KINDS:
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, f"Unknown kind {kind!r}: expected one of {', '.join(KINDS)}.")

    def text(name: str) -> str | None:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise RefusedRequestError(HTTPStatus.BAD_REQUEST, f"{name} must be a string.")
        return value or None

    url, title = text("url"), text("title") or ""
    if not url:
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, "The request names no url.")
    return BrowserCapture(url, title, text("html"), text("selection"), kind)


class CaptureEndpoint:
    """The server: ``start`` binds the first free port of ``ports`` and answers on threads until ``stop``."""

    def __init__(
        self,
        capture: Capture,
        token: Callable[[], str],
        *,
        max_body: int = DEFAULT_MAX_BODY,
        max_text: int = DEFAULT_MAX_CAPTURE_BYTES,
        ports: range = PORTS,
        reader: PageReader | None = None,
        max_connections: int = MAX_CONNECTIONS,
        head_seconds: float = HEAD_SECONDS,
        body_seconds: float = BODY_SECONDS,
    ) -> None:
        self._capture = capture
        self._token = token
        self.max_body = max_body
        self.max_text = max_text  # a page whose whole text is larger is refused before it is read
        self._ports = ports
        self.reader = reader if reader is not None else PageReader()
        self.max_connections = max_connections
        self.head_seconds = head_seconds
        self.body_seconds = body_seconds
        self._server: CappedServer | None = None
        self._thread: threading.Thread | None = None
        # what is stored goes one capture at a time: they take turns at the database anyway, and several at
        # once held the GIL the window needs; a page's reading (the long part) is done before, outside it
        self._one_at_a_time = threading.Lock()

    @property
    def port(self) -> int | None:
        return self._server.server_address[1] if self._server is not None else None

    def start(self) -> int:
        """Listen; the port. ``SanError`` when every port of the range is taken."""
        for port in self._ports:
            try:
                server = CappedServer(("127.0.0.1", port), _handler_for(self), self.max_connections)
            except OSError:
                continue
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, name="capture-endpoint", daemon=True)
            self._thread.start()
            return port
        raise SanError(
            f"The browser capture endpoint found no free port in {self._ports.start}-{self._ports.stop - 1} "
            "on 127.0.0.1 (another SAN Desktop, or other programs, hold them)."
        )

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        self.reader.close()

    # --- one request (on the server's threads) --------------------------------------------------

    def check_caller(self, headers: Message) -> None:
        """Refuse what a web page could send."""
        host = headers.get("Host", "")
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            raise RefusedRequestError(HTTPStatus.FORBIDDEN, f"Requests for host {host!r} are not taken here.")
        origin = headers.get("Origin")
        if origin and origin != "null" and not origin.startswith(EXTENSION_ORIGINS):
            raise RefusedRequestError(
                HTTPStatus.FORBIDDEN, "Requests from web pages are not taken: only the extension."
            )

    def check_token(self, headers: Message) -> None:
        given = headers.get("Authorization", "")
        expected = f"Bearer {self._token()}"
        if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8")):
            raise RefusedRequestError(
                HTTPStatus.UNAUTHORIZED,
                "The token is missing or wrong: copy it from SAN Desktop's Settings into the extension's options.",
            )

    def hello(self, query: str) -> dict[str, Any]:
        """The proof that this app holds the token, for the nonce the extension sent (``web.proof``)."""
        nonces = parse_qs(query).get("nonce", [])
        if len(nonces) != 1 or not valid_nonce(nonces[0]):
            raise RefusedRequestError(
                HTTPStatus.BAD_REQUEST, "The hello needs one nonce of 22 to 128 base64url characters."
            )
        port = self.port
        assert port is not None  # (answering: listening)
        proof = server_proof(self._token(), port, nonces[0])
        return {"app": APP_NAME, "version": __version__, "protocol": PROTOCOL, "proof": proof}

    def too_old(self) -> dict[str, Any]:
        raise RefusedRequestError(
            HTTPStatus.UPGRADE_REQUIRED,
            f"This browser extension is too old for {APP_NAME} {__version__}: update it to version "
            f"{EXTENSION_VERSION} or newer (load the browser-extension folder of this {APP_NAME} again, or its "
            "zip from `make extension`). Nothing was stored.",
        )

    def scrap(self, body: bytes) -> dict[str, Any]:
        try:
            sent = parse_capture(body)
            if sent.kind == "page" and sent.html:
                title, text = self.reader.read(sent.url, sent.html, self.max_text)  # (no lock held: see above)
                sent = replace(sent, html=None, text=text, title=sent.title or title)
            with self._one_at_a_time:
                scrap_id, duplicate = self._capture(sent)
        except PageTooLargeToReadError as exc:
            raise RefusedRequestError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(exc)) from exc
        except TransientError as exc:  # every reader busy: the extension may send it again
            raise RefusedRequestError(HTTPStatus.SERVICE_UNAVAILABLE, str(exc)) from exc
        except KnownError as exc:  # (empty, binary, too large, no readable text: said as it is)
            raise RefusedRequestError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
        return {"scrap_id": scrap_id, "duplicate": duplicate}


def _handler_for(endpoint: CaptureEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "SAN-Desktop"
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # (the socket's own reader, replaced by one that keeps the deadlines)
            self._reader = DeadlineReader(self.connection)
            self.rfile = io.BufferedReader(self._reader)

        def handle_one_request(self) -> None:
            # the line and the headers, from now, within head_seconds (waiting idle included)
            self._reader.deadline = time.monotonic() + endpoint.head_seconds
            super().handle_one_request()

        def do_GET(self) -> None:
            if "Content-Length" in self.headers or "Transfer-Encoding" in self.headers:
                self.close_connection = True  # (a body with a GET is not read: it must not pass for a request)
            path, _, query = self.path.partition("?")
            if path == "/v2/hello":
                self._answer(lambda: endpoint.hello(query), with_token=False)
            elif path in OLD_PATHS:
                self._answer(endpoint.too_old, with_token=False)
            else:
                self._answer(lambda: _not_found(path))

        def do_POST(self) -> None:
            if self.path in OLD_PATHS:
                self._answer(endpoint.too_old, with_token=False)
            elif self.path == "/v2/scraps":
                self._answer(lambda: endpoint.scrap(self._body()))
            else:
                self._answer(lambda: _not_found(self.path))

        def _body(self) -> bytes:
            length = body_length(self.headers, endpoint.max_body)
            self._reader.deadline = time.monotonic() + endpoint.body_seconds
            try:
                body = self.rfile.read(length)
            except TimeoutError:
                raise RefusedRequestError(
                    HTTPStatus.REQUEST_TIMEOUT, "The request's body did not arrive in time."
                ) from None
            if len(body) < length:
                raise RefusedRequestError(HTTPStatus.BAD_REQUEST, "The request ended before its body did.")
            return body

        def _answer(self, work: Callable[[], dict[str, Any]], *, with_token: bool = True) -> None:
            try:
                endpoint.check_caller(self.headers)
                if with_token:
                    endpoint.check_token(self.headers)
                status, answer = HTTPStatus.OK, work()
            except RefusedRequestError as refusal:
                status, answer = refusal.status, {"error": str(refusal)}
            except Exception:  # a bug: said as one, and logged with its trace
                logging.getLogger(__name__).exception("The capture endpoint failed on %s", self.path)
                status, answer = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "SAN Desktop failed: see its log."}
            if status is not HTTPStatus.OK:
                self.close_connection = True  # (a body sent with it may be unread)
            payload = json.dumps(answer, ensure_ascii=False).encode("utf-8")
            self.connection.settimeout(WRITE_SECONDS)
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            logging.getLogger(__name__).debug("capture endpoint: " + format, *args)

    return Handler


def _not_found(path: str) -> dict[str, Any]:
    raise RefusedRequestError(HTTPStatus.NOT_FOUND, f"Nothing at {path}.")
