"""The capture endpoint the browser extension talks to (as Joplin's Web Clipper talks to its ClipperServer):
HTTP on 127.0.0.1 only, on the first free port of ``PORTS``, while the app runs.

    GET  /v1/status  -> {"app": "SAN Desktop", "version": ...}
    POST /v1/scraps  {url, title, html, selection, kind} -> {"scrap_id": ..., "duplicate": ...}

Every request needs ``Authorization: Bearer <token>``. What a web page could send is refused before the
token is even looked at: a ``Host`` other than this address and port (DNS rebinding), an ``Origin`` that is a
web page's rather than an extension's, a body over ``max_body`` bytes (refused by its announced length, not
read). Requests are answered on a few threads of their own; what they store goes through ``capture``, which
the app gives (no database or Qt here)."""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from san_desktop import APP_NAME, __version__
from san_desktop.core.errors import KnownError, SanError
from san_desktop.core.thread_priority import lower_current_thread

PORTS = range(41730, 41740)  # documented: the extension tries these in turn
DEFAULT_MAX_BODY = 10_000_000  # a page's whole DOM; a capture keeps at most capture.max_bytes of its text
KINDS = ("page", "selection", "link")
EXTENSION_ORIGINS = ("chrome-extension://", "moz-extension://", "safari-web-extension://")


@dataclass(frozen=True)
class BrowserCapture:
    """What the extension sent, checked."""

    url: str
    title: str
    html: str | None
    selection: str | None
    kind: str


Capture = Callable[[BrowserCapture], tuple[str, bool]]  # -> (scrap id, duplicate)


class RefusedRequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_capture(body: bytes) -> BrowserCapture:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, f"The request is not JSON: {exc}") from exc
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
        ports: range = PORTS,
    ) -> None:
        self._capture = capture
        self._token = token
        self.max_body = max_body
        self._ports = ports
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # one capture at a time: they take turns at the database anyway, and taking a page's article is
        # Python work that, several at once, held the GIL the window needs (a burst made it stutter)
        self._one_at_a_time = threading.Lock()

    @property
    def port(self) -> int | None:
        return self._server.server_address[1] if self._server is not None else None

    def start(self) -> int:
        """Listen; the port. ``SanError`` when every port of the range is taken."""
        for port in self._ports:
            try:
                server = _Server(("127.0.0.1", port), _handler_for(self))
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

    # --- one request (on the server's threads) --------------------------------------------------

    def check(self, headers: Message) -> None:
        """Refuse what a web page could send, then a missing or wrong token."""
        host = headers.get("Host", "")
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            raise RefusedRequestError(HTTPStatus.FORBIDDEN, f"Requests for host {host!r} are not taken here.")
        origin = headers.get("Origin")
        if origin and origin != "null" and not origin.startswith(EXTENSION_ORIGINS):
            raise RefusedRequestError(
                HTTPStatus.FORBIDDEN, "Requests from web pages are not taken: only the extension."
            )
        given = headers.get("Authorization", "")
        expected = f"Bearer {self._token()}"
        if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8")):
            raise RefusedRequestError(
                HTTPStatus.UNAUTHORIZED,
                "The token is missing or wrong: copy it from SAN Desktop's Settings into the extension's options.",
            )

    def status(self) -> dict[str, Any]:
        return {"app": APP_NAME, "version": __version__}

    def scrap(self, body: bytes) -> dict[str, Any]:
        try:
            sent = parse_capture(body)
            with self._one_at_a_time:
                scrap_id, duplicate = self._capture(sent)
        except KnownError as exc:  # (empty, binary, too large, no readable text: said as it is)
            raise RefusedRequestError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
        return {"scrap_id": scrap_id, "duplicate": duplicate}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False  # (another SAN Desktop on the port must be noticed, not shared)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        lower_current_thread()  # a burst of pages must not take the window's turns on the CPU
        super().process_request_thread(request, client_address)


def _handler_for(endpoint: CaptureEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "SAN-Desktop"
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._answer(lambda: endpoint.status() if self.path == "/v1/status" else _not_found(self.path))

        def do_POST(self) -> None:
            def scrap() -> dict[str, Any]:
                if self.path != "/v1/scraps":
                    return _not_found(self.path)
                return endpoint.scrap(self._body())

            self._answer(scrap)

        def _body(self) -> bytes:
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                raise RefusedRequestError(HTTPStatus.LENGTH_REQUIRED, "The request says not how long it is.") from None
            if length > endpoint.max_body:
                self.close_connection = True  # (its body is not read)
                raise RefusedRequestError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"The page is too large to send ({length:,} bytes; at most {endpoint.max_body:,}).",
                )
            return self.rfile.read(length)

        def _answer(self, work: Callable[[], dict[str, Any]]) -> None:
            try:
                endpoint.check(self.headers)
                status, answer = HTTPStatus.OK, work()
            except RefusedRequestError as refusal:
                status, answer = refusal.status, {"error": str(refusal)}
                if refusal.status in (HTTPStatus.FORBIDDEN, HTTPStatus.UNAUTHORIZED):
                    self.close_connection = True  # (a body sent with it is not read)
            except Exception:  # a bug: said as one, and logged with its trace
                logging.getLogger(__name__).exception("The capture endpoint failed on %s", self.path)
                status, answer = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "SAN Desktop failed: see its log."}
            payload = json.dumps(answer, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            logging.getLogger(__name__).debug("capture endpoint: " + format, *args)

    return Handler


def _not_found(path: str) -> dict[str, Any]:
    raise RefusedRequestError(HTTPStatus.NOT_FOUND, f"Nothing at {path}.")
