"""Another program on a port of the capture endpoint's range (issue 38, item 7): a real socket server on
127.0.0.1 that records every byte it is sent and answers the extension's hello as a program without the
token can — with a made-up proof, by asking for the token, or by relaying the hello to the real app."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from san_desktop.web.endpoint import PORTS

Behaviour = Literal["lying", "asking", "relaying"]


class Squatter:
    """Listens on ``port`` (the first free one of the range) until closed; ``received`` holds what came in."""

    def __init__(self, behaviour: Behaviour, relay_to: int | None = None) -> None:
        self.behaviour = behaviour
        self.relay_to = relay_to  # the app's port, for "relaying"
        self.received = bytearray()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._listener = _bind_first_free()
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name="squatter", daemon=True)
        self._thread.start()

    def text(self) -> str:
        with self._lock:
            return self.received.decode("utf-8", "replace")

    def close(self) -> None:
        self._closing.set()
        self._thread.join(10)
        self._listener.close()

    def _serve(self) -> None:
        self._listener.settimeout(0.05)  # (a blocked accept() does not notice its socket closed: asked in turns)
        while not self._closing.is_set():
            try:
                connection, _address = self._listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            request = b""
            try:
                while not _complete(request):
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    request += chunk
            finally:
                with self._lock:
                    self.received += request
            connection.sendall(self._reply(request))

    def _reply(self, request: bytes) -> bytes:
        if self.behaviour == "relaying" and self.relay_to is not None:
            # the hello passed on to the app, as it would come from the extension there
            forwarded = re.sub(rb"(?im)^host:[^\r\n]*", f"Host: 127.0.0.1:{self.relay_to}".encode(), request, count=1)
            with socket.create_connection(("127.0.0.1", self.relay_to), timeout=10) as app:
                app.sendall(forwarded)
                answer = b""
                while not _complete(answer) and (chunk := app.recv(65536)):
                    answer += chunk
            return answer
        if self.behaviour == "asking":
            return _json(401, {"error": "The token is missing or wrong."})
        return _json(200, {"app": "SAN Desktop", "version": "9.9", "protocol": 2, "proof": "A" * 43})


def _complete(message: bytes) -> bool:
    """Whether ``message`` holds an HTTP head and the whole body it announces."""
    if b"\r\n\r\n" not in message:
        return False
    head, _, body = message.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return length is None or len(body) >= int(length.group(1))


def _json(status: int, body: dict[str, object]) -> bytes:
    payload = json.dumps(body).encode()
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    return (head + "Connection: close\r\n\r\n").encode() + payload


def _bind_first_free() -> socket.socket:
    """A listening socket on the lowest free port of the range but its last (the app must find one above)."""
    for port in PORTS[:-1]:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (a port in TIME_WAIT is free to take)
        try:
            listener.bind(("127.0.0.1", port))
        except OSError:
            listener.close()
            continue
        listener.listen(16)
        return listener
    raise AssertionError(f"no free port in {PORTS.start}-{PORTS.stop - 2} for the squatter")


@contextmanager
def squatting(behaviour: Behaviour, relay_to: int | None = None) -> Iterator[Squatter]:
    squatter = Squatter(behaviour, relay_to)
    try:
        yield squatter
    finally:
        squatter.close()
