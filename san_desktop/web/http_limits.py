"""What one connection to the capture endpoint may hold (issue 38): a request's line and headers must arrive
within ``HEAD_SECONDS`` of the connection waiting for it (an idle keep-alive connection is closed then too)
and its body within ``BODY_SECONDS``, each as a whole, so a client dripping a byte at a time gains nothing
(slowloris); its length must be announced, as digits, within the cap; and at most ``MAX_CONNECTIONS`` are
served at once, the next answered 503 on the spot rather than given a thread."""

from __future__ import annotations

import io
import json
import logging
import math
import re
import socket
import sys
import threading
import time
from email.message import Message
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from typing import Any

from san_desktop.core.thread_priority import lower_current_thread

log = logging.getLogger(__name__)

HEAD_SECONDS = 10.0  # an extension sends its request at once: this bounds idle and slow clients
BODY_SECONDS = 60.0  # a 10 MB page over loopback takes well under a second
WRITE_SECONDS = 10.0  # an answer of a few hundred bytes
MAX_CONNECTIONS = 32  # an extension sends one request at a time; a burst of tabs is a handful
_LENGTH = re.compile(r"[0-9]{1,15}")  # (int() would take "-1", " 5", "1_000" and "５")


class RefusedRequestError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def body_length(headers: Message, limit: int) -> int:
    """The announced length of a request's body: refused when absent (411), not one plain number (400) or
    over ``limit`` (413); a chunked body is not taken (411)."""
    if headers.get("Transfer-Encoding") is not None:
        raise RefusedRequestError(
            HTTPStatus.LENGTH_REQUIRED, "The request must say how long it is (Content-Length), not come in chunks."
        )
    values = {value.strip() for value in headers.get_all("Content-Length") or []}
    if not values:
        raise RefusedRequestError(HTTPStatus.LENGTH_REQUIRED, "The request says not how long it is (Content-Length).")
    if len(values) > 1:
        raise RefusedRequestError(HTTPStatus.BAD_REQUEST, "The request gives two different lengths.")
    [text] = values
    if not _LENGTH.fullmatch(text):
        raise RefusedRequestError(
            HTTPStatus.BAD_REQUEST, f"The request's length is not a number of bytes: {text[:40]!r}."
        )
    length = int(text)
    if length > limit:
        raise RefusedRequestError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"The page is too large to send ({length:,} bytes; at most {limit:,})."
        )
    return length


class DeadlineReader(io.RawIOBase):
    """A socket's bytes, each read given only the time left until ``deadline`` (a monotonic time), so the
    whole of what is read by then must have arrived by then."""

    def __init__(self, connection: socket.socket) -> None:
        super().__init__()
        self._connection = connection
        self.deadline = math.inf

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._connection.settimeout(None if math.isinf(left) else left)
        return self._connection.recv_into(buffer)


def _busy_answer() -> bytes:
    payload = json.dumps({"error": "SAN Desktop is busy with other requests: try again in a moment."}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(payload)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + payload


class CappedServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` of them; beyond, a 503 written by the accepting
    thread (a short answer into a new socket's empty buffer) and the connection closed."""

    daemon_threads = True
    # A port whose connections the app closed (idle ones, refusals) waits out TCP's TIME_WAIT for a minute; on
    # Linux and macOS SO_REUSEADDR lets a restarted app have it again while still refusing to share a port
    # another program listens on. On Windows it would let two listen on one port: not set there.
    allow_reuse_address = sys.platform != "win32"

    def __init__(self, address: tuple[str, int], handler: Any, max_connections: int = MAX_CONNECTIONS) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse_busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread was started to give the slot back
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            lower_current_thread()  # a burst of pages must not take the window's turns on the CPU
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @staticmethod
    def _refuse_busy(request: socket.socket) -> None:
        try:
            request.settimeout(1.0)
            request.sendall(_busy_answer())
            # what the client sent already is read away, so that closing sends it the answer, not a reset
            request.setblocking(False)
            for _ in range(16):
                if not request.recv(65536):
                    break
        except OSError:
            pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that went away or was too slow is no bug (socketserver would print a traceback to stderr)
        if isinstance(sys.exc_info()[1], OSError):
            log.debug("capture endpoint: a connection failed", exc_info=True)
        else:
            log.exception("capture endpoint: a connection failed")
