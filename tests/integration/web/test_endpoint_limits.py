"""What one connection may hold at the capture endpoint (issue 38, item 9), over raw sockets on 127.0.0.1: a
body's length must be announced as one plain number within the cap (``-1`` once read to the end of the
stream), an idle or dripping client is cut off at its deadline whatever it sends, connections beyond the cap
are answered 503 without a thread, and JSON nested past the parser's depth is a 400, not a logged 500."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from san_desktop.web.endpoint import BrowserCapture, CaptureEndpoint

TOKEN = "test-token-0123456789"
HEAD_SECONDS = 0.5
BODY_SECONDS = 0.5
WAIT = 20.0  # how long a test waits for the endpoint's answer or for it to hang up: never reached when it works
ANY_PORT = range(0, 1)  # a free port of the system's choosing: the documented range is for the extension's tests


@pytest.fixture
def captured() -> list[BrowserCapture]:
    return []


@pytest.fixture
def endpoint(captured: list[BrowserCapture]) -> Iterator[CaptureEndpoint]:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        captured.append(sent)
        return f"scrap-{len(captured)}", False

    served = CaptureEndpoint(
        capture,
        lambda: TOKEN,
        max_body=1_000,
        ports=ANY_PORT,
        max_connections=4,
        head_seconds=HEAD_SECONDS,
        body_seconds=BODY_SECONDS,
    )
    served.start()
    yield served
    served.stop()


def _connect(endpoint: CaptureEndpoint) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", endpoint.port or 0), timeout=WAIT)
    return connection


def _head(endpoint: CaptureEndpoint, *lines: str, method: str = "POST /v2/scraps") -> bytes:
    head = [f"{method} HTTP/1.1", f"Host: 127.0.0.1:{endpoint.port}", f"Authorization: Bearer {TOKEN}", *lines]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


def _answer(connection: socket.socket) -> tuple[int, dict[str, str]]:
    """The status and JSON body of the endpoint's answer (``TimeoutError`` when none comes within WAIT)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed without an answer: {received!r}")
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), json.loads(body)


def _hangs_up(connection: socket.socket) -> bool:
    """Whether the endpoint closes the connection (reading away anything it answers first) within WAIT."""
    try:
        while connection.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize(
    ("lines", "status", "said"),
    [
        ((), 411, "says not how long it is"),
        (("Content-Length: -1",), 400, "not a number of bytes"),
        (("Content-Length: abc",), 400, "not a number of bytes"),
        (("Content-Length: 1_0",), 400, "not a number of bytes"),
        (("Content-Length: +10",), 400, "not a number of bytes"),
        (("Content-Length: 10", "Content-Length: 12"), 400, "two different lengths"),
        (("Content-Length: 1001",), 413, "too large"),
        (("Content-Length: 99999999999999999999999",), 400, "not a number of bytes"),
        (("Transfer-Encoding: chunked",), 411, "not come in chunks"),
    ],
)
def test_a_body_length_that_is_absent_negative_not_a_number_or_over_the_cap_is_refused(
    endpoint: CaptureEndpoint, captured: list[BrowserCapture], lines: tuple[str, ...], status: int, said: str
) -> None:
    with _connect(endpoint) as connection:
        # a body follows, and the stream stays open: a server reading "to the end" would never answer
        connection.sendall(_head(endpoint, *lines) + b'{"url": "https://a.example/", "kind": "link"}')
        answered, body = _answer(connection)
        assert (answered, said in body["error"]) == (status, True), body
        assert _hangs_up(connection)  # (what was sent after the head is not read as a next request)
    assert captured == []


def test_an_announced_body_is_read_to_its_length_and_no_further(
    endpoint: CaptureEndpoint, captured: list[BrowserCapture]
) -> None:
    body = b'{"url": "https://a.example/", "kind": "link"}'
    with _connect(endpoint) as connection:
        connection.sendall(_head(endpoint, f"Content-Length: {len(body)}") + body)
        assert _answer(connection) == (200, {"scrap_id": "scrap-1", "duplicate": False})
    assert [sent.url for sent in captured] == ["https://a.example/"]


def test_an_idle_connection_is_closed(endpoint: CaptureEndpoint) -> None:
    with _connect(endpoint) as connection:
        assert _hangs_up(connection)


def test_a_client_dripping_its_headers_is_cut_off_at_the_deadline_whatever_it_sends(endpoint: CaptureEndpoint) -> None:
    with _connect(endpoint) as connection:
        # one header line growing a byte at a time: no count of header lines ends it, only the deadline
        connection.sendall(b"POST /v2/scraps HTTP/1.1\r\nX-Slow: ")
        connection.settimeout(0.05)  # each wait for the server to hang up is the pause between two drops
        drops = 0
        while drops < 400:  # 20 s of drops: the deadline is HEAD_SECONDS
            try:
                connection.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
            drops += 1
            try:
                if not connection.recv(65536):
                    break
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
        assert drops < 400, "the endpoint kept a dripping client"


def test_a_body_that_does_not_arrive_in_time_is_refused(
    endpoint: CaptureEndpoint, captured: list[BrowserCapture]
) -> None:
    with _connect(endpoint) as connection:
        connection.sendall(_head(endpoint, "Content-Length: 500") + b'{"url": ')  # and the rest never comes
        assert _answer(connection) == (408, {"error": "The request's body did not arrive in time."})
        assert _hangs_up(connection)
    assert captured == []


def test_connections_beyond_the_cap_are_answered_503_and_served_again_once_one_is_free(
    endpoint: CaptureEndpoint,
) -> None:
    hello = _head(endpoint, method="GET /v2/hello?nonce=" + "n" * 32)
    endpoint.head_seconds = WAIT  # (the idle ones must hold their places while the test asks)
    idle = [_connect(endpoint) for _ in range(endpoint.max_connections)]
    try:
        for _ in range(3):
            with _connect(endpoint) as extra:
                extra.sendall(hello)
                status, body = _answer(extra)
                assert status == 503
                assert "busy" in body["error"]
    finally:
        for connection in idle:
            connection.close()
    # each idle connection's thread sees it closed and gives its place back: asked until it has (a 503 is
    # answered at once, so this is a bounded wait for that condition)
    deadline = time.monotonic() + WAIT
    status = 503
    while status == 503 and time.monotonic() < deadline:
        with _connect(endpoint) as again:
            again.sendall(hello)
            status, _body = _answer(again)
    assert status == 200


@pytest.mark.parametrize("nested", ["[" * 100_000, '{"a":' * 100_000, '{"url": ' + "[" * 100_000])
def test_json_nested_too_deeply_is_a_400_and_nothing_is_logged_as_a_failure(
    endpoint: CaptureEndpoint, captured: list[BrowserCapture], caplog: pytest.LogCaptureFixture, nested: str
) -> None:
    endpoint.max_body = 1_000_000
    body = nested.encode()
    with _connect(endpoint) as connection:
        connection.sendall(_head(endpoint, f"Content-Length: {len(body)}") + body)
        status, answer = _answer(connection)
    assert status == 400
    assert "nested too deeply" in answer["error"]
    assert [record for record in caplog.records if record.levelname in ("ERROR", "CRITICAL")] == []
    assert captured == []
