"""The connections of one page download (issue 23): dialled only to the addresses ``AddressGuard`` checked,
and bounded by one deadline for the whole request. httpx's own timeouts are per read, so a server sending one
header line a second could hold a download (and the one-thread network pool behind it) for minutes; here
every lookup, connect, TLS handshake, read and write waits at most until the deadline (and the read timeout).

httpx does not let a transport choose httpcore's network backend; ``GuardedTransport`` therefore replaces the
connection pool of an ``httpx.HTTPTransport`` (and fails loudly if a new httpx has none to replace).
"""

from __future__ import annotations

import functools
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import httpcore
import httpx

from san_desktop.web.addresses import AddressGuard

_T = TypeVar("_T")


class Deadline:
    """One moment for a whole download; ``reached`` once a wait was cut short by it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.reached = False

    def within(self, call: Callable[[float], _T], timeout: float | None, error: type[Exception]) -> _T:
        """``call(limit)``, the limit being ``timeout`` or what is left until the deadline if that is less."""
        left = self.at - time.monotonic()
        if left <= 0:
            self.reached = True
            raise error(f"the whole-request limit of {self.seconds:g} s was reached")
        limit = left if timeout is None or left < timeout else timeout
        try:
            return call(limit)
        except httpcore.TimeoutException:
            self.reached = self.reached or limit == left  # (the deadline, not the read timeout, ran out)
            raise


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline, between_reads: Callable[[], None]):
        self._stream = stream
        self._deadline = deadline
        self._between_reads = between_reads

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._between_reads()  # (a cancelled job stops here too, while the headers trickle in)
        return self._deadline.within(lambda limit: self._stream.read(max_bytes, limit), timeout, httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._deadline.within(lambda limit: self._stream.write(buffer, limit), timeout, httpcore.WriteTimeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        # the certificate is checked against the name in the address, though the socket went to a checked IP
        tls = self._deadline.within(
            lambda limit: self._stream.start_tls(ssl_context, server_hostname, limit), timeout, httpcore.ConnectTimeout
        )
        return _DeadlineStream(tls, self._deadline, self._between_reads)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _GuardedBackend(httpcore.NetworkBackend):
    def __init__(self, guard: AddressGuard, deadline: Deadline, between_reads: Callable[[], None]) -> None:
        self._guard = guard
        self._deadline = deadline
        self._between_reads = between_reads
        self._system = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        lookup = functools.partial(_on_a_thread, functools.partial(self._guard.addresses, host, port))
        try:
            addresses = self._deadline.within(lookup, timeout, httpcore.ConnectTimeout)
        except OSError as exc:  # the name does not resolve: as httpcore says it
            raise httpcore.ConnectError(str(exc)) from exc
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            connect = functools.partial(
                self._system.connect_tcp,
                self._guard.network.route(address),
                port,
                local_address=local_address,
                socket_options=socket_options,
            )
            try:
                stream = self._deadline.within(connect, timeout, httpcore.ConnectTimeout)
            except httpcore.ConnectError as exc:
                failure = exc  # the next address may answer
                continue
            return _DeadlineStream(stream, self._deadline, self._between_reads)
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("pages are fetched over TCP only")


def _on_a_thread(call: Callable[[], _T], seconds: float) -> _T:
    """``call()``, waited for at most ``seconds``: the system resolver has no timeout of its own to give. A
    lookup that hangs is left to finish on its (daemon) thread."""
    future: Future[_T] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="page-fetch-lookup", daemon=True).start()
    try:
        return future.result(seconds)
    except FutureTimeout as exc:
        raise httpcore.ConnectTimeout(f"the name did not resolve within {seconds:g} s") from exc


class GuardedTransport(httpx.HTTPTransport):
    """An ``httpx.HTTPTransport`` whose connections go through ``guard`` and end by ``deadline``. No proxy:
    the addresses dialled must be the checked ones."""

    def __init__(self, guard: AddressGuard, deadline: Deadline, between_reads: Callable[[], None]) -> None:
        context = httpx.create_ssl_context()  # (SSL_CERT_FILE and SSL_CERT_DIR still count)
        super().__init__(verify=context, trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.ConnectionPool):
            raise RuntimeError("httpx.HTTPTransport no longer keeps its httpcore pool in _pool; update connection.py")
        self._pool = httpcore.ConnectionPool(
            ssl_context=context, network_backend=_GuardedBackend(guard, deadline, between_reads)
        )
