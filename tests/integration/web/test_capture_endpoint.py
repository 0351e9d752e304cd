"""The browser extension's endpoint over real HTTP on 127.0.0.1: what a web page could send is refused (no or
a wrong token, another Host, a page's Origin, a 20 MB body), the hello proves the token without it, an old
extension is told to update, a page is stored from the HTML the browser sent (no download), the same page twice
is one scrap, a burst of 200 requests is answered whole."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import JobStatus, JobType, SourceType
from san_desktop.core.thread_priority import BACKGROUND_NICE
from san_desktop.web.endpoint import PORTS, BrowserCapture, CaptureEndpoint
from san_desktop.web.proof import EXTENSION_VERSION, PROTOCOL, server_proof
from tests.support.jobs import jobs_of
from tests.support.thread_priority import linux_only, thread_nice
from tests.support.til import run_one

TOKEN = "test-token-0123456789"
EXTENSION = "chrome-extension://abcdefghijklmnop"
# what a page looks like once its JavaScript ran: the article is in the DOM, not in the HTML a download gets
RENDERED = """<!DOCTYPE html><html><head><title>Checkpoints in SQLite</title></head><body>
<nav>Home | Blog | About</nav>
<article><h1>Checkpoints in SQLite</h1>
<p>A checkpoint copies the pages of the write-ahead log back into the database file, so that the log can be
reset and does not grow without end.</p>
<p>Readers that stay open can keep a checkpoint from finishing; the WAL file then grows until they let go.</p>
</article><footer>© the blog</footer></body></html>"""


@pytest.fixture
def endpoint(app: SanApp) -> Iterator[CaptureEndpoint]:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    served = CaptureEndpoint(capture, lambda: TOKEN, max_body=10_000_000)
    served.start()
    yield served
    served.stop()


def _post(endpoint: CaptureEndpoint, body: dict[str, Any], **headers: str) -> httpx.Response:
    sent = {"Authorization": f"Bearer {TOKEN}", "Origin": EXTENSION, **headers}
    return httpx.post(f"http://127.0.0.1:{endpoint.port}/v2/scraps", json=body, headers=sent, timeout=30)


def test_only_the_extension_with_the_token_is_answered(endpoint: CaptureEndpoint, app: SanApp) -> None:
    url = f"http://127.0.0.1:{endpoint.port}/v2/scraps"
    link = {"url": "https://a.example/", "kind": "link"}
    missing = httpx.post(url, json=link)
    assert missing.status_code == 401
    assert "copy it from SAN Desktop's Settings" in missing.json()["error"]
    assert httpx.post(url, json=link, headers={"Authorization": "Bearer guessed"}).status_code == 401
    rebound = httpx.post(
        url, json=link, headers={"Authorization": f"Bearer {TOKEN}", "Host": f"evil.example:{endpoint.port}"}
    )
    assert rebound.status_code == 403  # DNS rebinding: a page's host name pointed at 127.0.0.1
    from_page = _post(endpoint, {"url": "https://a.example/", "kind": "link"}, Origin="https://evil.example")
    assert from_page.status_code == 403
    assert "web pages" in from_page.json()["error"]
    assert app.scraps.list_scraps() == []  # none of them stored anything
    firefox = _post(endpoint, {"url": "https://a.example/", "kind": "link"}, Origin="moz-extension://1234-5678")
    assert firefox.status_code == 200


def test_the_hello_proves_the_token_for_this_port_and_nonce_without_being_sent_it(endpoint: CaptureEndpoint) -> None:
    port = endpoint.port or 0
    nonce = "n" * 22 + "0123456789abcdef_-"
    answer = httpx.get(f"http://127.0.0.1:{port}/v2/hello", params={"nonce": nonce}, headers={"Origin": EXTENSION})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["app"], body["protocol"]) == ("SAN Desktop", PROTOCOL)
    assert body["proof"] == server_proof(TOKEN, port, nonce)
    # the proof is for this port, this nonce and this token only
    assert body["proof"] not in (
        server_proof(TOKEN, port + 1, nonce),
        server_proof(TOKEN, port, nonce[::-1]),
        server_proof("another-token", port, nonce),
    )
    again = httpx.get(f"http://127.0.0.1:{port}/v2/hello", params={"nonce": nonce[::-1]}).json()["proof"]
    assert again == server_proof(TOKEN, port, nonce[::-1])
    for bad in ("", "short", "x" * 129, "has space in it and is long enough", "%00" * 30):
        refused = httpx.get(f"http://127.0.0.1:{port}/v2/hello?nonce={bad}")
        assert refused.status_code == 400, bad
        assert "nonce" in refused.json()["error"]
    # a web page may not ask for it, nor a page's host name pointed at 127.0.0.1
    from_page = httpx.get(
        f"http://127.0.0.1:{port}/v2/hello", params={"nonce": nonce}, headers={"Origin": "https://evil.example"}
    )
    assert from_page.status_code == 403
    rebound = httpx.get(
        f"http://127.0.0.1:{port}/v2/hello", params={"nonce": nonce}, headers={"Host": f"evil.example:{port}"}
    )
    assert rebound.status_code == 403


def test_an_old_extension_is_told_to_update_and_nothing_is_stored(endpoint: CaptureEndpoint, app: SanApp) -> None:
    """Extension 0.1.x sent its token with its first probe (GET /v1/status) to whatever held the port: the app
    answers it with a sentence its options page and badge show, asking for the update."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": EXTENSION}
    status = httpx.get(f"http://127.0.0.1:{endpoint.port}/v1/status", headers=headers)
    sent = httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v1/scraps",
        json={"url": "https://a.example/p", "selection": "Raft elects a leader.", "kind": "selection"},
        headers=headers,
    )
    for answer in (status, sent):
        assert answer.status_code == 426
        assert answer.json()["error"].startswith("This browser extension is too old for SAN Desktop")
        assert f"update it to version {EXTENSION_VERSION} or newer" in answer.json()["error"]
    assert app.scraps.list_scraps() == []
    manifest = json.loads((Path(__file__).parents[3] / "browser-extension" / "manifest.json").read_text())
    assert manifest["version"] == EXTENSION_VERSION  # the version the sentence asks for is the one shipped


def test_a_20_mb_body_is_refused_by_its_length_without_being_read(endpoint: CaptureEndpoint, app: SanApp) -> None:
    with socket.create_connection(("127.0.0.1", endpoint.port or 0), timeout=10) as connection:
        connection.sendall(
            (
                f"POST /v2/scraps HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {20_000_000}\r\n\r\n"
            ).encode()
            + b"{" * 65_536
        )
        answer = b""
        while not answer.endswith(b"}"):  # the head and the JSON body may come in two reads
            try:
                chunk = connection.recv(4096)
            except ConnectionResetError:  # (closed with the unread body: what was sent is in already)
                break
            if not chunk:
                break
            answer += chunk
    assert answer.decode().startswith("HTTP/1.1 413")
    assert "too large" in answer.decode()
    assert app.scraps.list_scraps() == []


def test_a_page_is_stored_from_the_html_the_browser_sent_and_twice_is_one_scrap(
    endpoint: CaptureEndpoint, app: SanApp
) -> None:
    page = {"url": "https://blog.invalid/wal?utm_source=x", "title": "Checkpoints", "html": RENDERED, "kind": "page"}
    first = _post(endpoint, page)
    assert first.status_code == 200, first.text
    assert first.json()["duplicate"] is False
    scrap = app.scraps.get(first.json()["scrap_id"])
    assert scrap.source_type is SourceType.URL
    assert scrap.source_ref == "https://blog.invalid/wal"
    assert "Readers that stay open can keep a checkpoint from finishing" in scrap.content
    assert "Home | Blog" not in scrap.content  # the article, not the navigation
    assert not scrap.awaiting_page
    kinds = {job.job_type for job in jobs_of(app.queue) if job.target_id == scrap.id}
    assert kinds == {JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE}  # no download: the page is in
    again = _post(endpoint, {**page, "url": "https://blog.invalid/wal"})
    assert again.json() == {"scrap_id": scrap.id, "duplicate": True}


def test_a_selection_and_a_link_and_what_cannot_be_stored(endpoint: CaptureEndpoint, app: SanApp) -> None:
    chosen = _post(endpoint, {"url": "https://a.example/p", "selection": "Raft elects a leader.", "kind": "selection"})
    scrap = app.scraps.get(chosen.json()["scrap_id"])
    assert (scrap.source_type, scrap.content, scrap.source_ref) == (
        SourceType.TEXT,
        "Raft elects a leader.",
        "https://a.example/p",
    )
    link = _post(endpoint, {"url": "https://b.example/post", "title": "A post", "kind": "link"})
    assert {job.job_type for job in jobs_of(app.queue) if job.target_id == link.json()["scrap_id"]} == {
        JobType.PAGE_FETCH
    }
    nothing = _post(endpoint, {"url": "https://a.example/p", "selection": "  ", "kind": "selection"})
    assert nothing.status_code == 400
    assert "no text is selected" in nothing.json()["error"]
    empty_page = _post(endpoint, {"url": "https://c.example/", "html": "<html><body></body></html>", "kind": "page"})
    assert empty_page.status_code == 400
    assert "no readable text" in empty_page.json()["error"]
    broken = httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v2/scraps",
        content=b"{not json",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert broken.status_code == 400
    assert "not JSON" in broken.json()["error"]


def test_a_burst_of_200_requests_is_answered_whole(endpoint: CaptureEndpoint, app: SanApp) -> None:
    answers: list[int] = []
    lock = threading.Lock()

    def send(batch: range) -> None:
        with httpx.Client(timeout=60) as client:
            for n in batch:
                response = client.post(
                    f"http://127.0.0.1:{endpoint.port}/v2/scraps",
                    json={"url": f"https://c.example/{n}", "selection": f"Note {n} on consensus.", "kind": "selection"},
                    headers={"Authorization": f"Bearer {TOKEN}", "Origin": EXTENSION},
                )
                with lock:
                    answers.append(response.status_code)

    senders = [threading.Thread(target=send, args=(range(start, 200, 8),)) for start in range(8)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    assert answers == [200] * 200
    assert len(app.scraps.list_scraps(limit=500)) == 200


def test_another_port_is_taken_when_the_first_is_busy(app: SanApp) -> None:
    first = CaptureEndpoint(lambda _sent: ("", False), lambda: TOKEN)
    second = CaptureEndpoint(lambda _sent: ("", False), lambda: TOKEN)
    try:
        port = first.start()
        # the next free one: not always port + 1, since other programs (or tests) may hold some of the range
        other = second.start()
        assert other in PORTS
        assert other != port
    finally:
        first.stop()
        second.stop()


@linux_only  # (Windows does not get SO_REUSEADDR: there it would share a port another program listens on)
def test_a_restarted_endpoint_takes_its_port_again_though_it_closed_connections_on_it() -> None:
    first = CaptureEndpoint(lambda _sent: ("", False), lambda: TOKEN)
    port = first.start()
    try:
        refused = httpx.post(f"http://127.0.0.1:{port}/v2/scraps", json={})  # (answered, then closed by the app)
        assert refused.status_code == 401
    finally:
        first.stop()
    again = CaptureEndpoint(lambda _sent: ("", False), lambda: TOKEN, ports=range(port, port + 1))
    try:
        assert again.start() == port  # its connections' TIME_WAIT does not keep the app off its own port
    finally:
        again.stop()


def test_a_link_still_waiting_for_its_page_takes_the_page_the_browser_sent(
    endpoint: CaptureEndpoint, app: SanApp
) -> None:
    link = app.capture_url("https://blog.invalid/wal").value  # scrapped earlier: its download waits
    sent = _post(endpoint, {"url": "https://blog.invalid/wal", "html": RENDERED, "kind": "page"})
    assert sent.json() == {"scrap_id": link.scrap_id, "duplicate": False}  # the page came in: "scrapped"
    scrap = app.scraps.get(link.scrap_id)
    assert "Readers that stay open can keep a checkpoint from finishing" in scrap.content
    assert not scrap.awaiting_page
    assert run_one(app, JobType.PAGE_FETCH).status is JobStatus.COMPLETED  # its download: nothing to do
    assert "Readers that stay open" in app.scraps.get(link.scrap_id).content  # the browser's page stays


@linux_only
def test_a_capture_runs_at_a_lower_cpu_priority_than_the_window() -> None:
    niceness: list[int] = []

    def capture(_sent: BrowserCapture) -> tuple[str, bool]:
        niceness.append(thread_nice())
        return "scrap-1", False

    served = CaptureEndpoint(capture, lambda: TOKEN)
    served.start()
    try:
        assert _post(served, {"url": "https://a.example/", "selection": "Some text", "kind": "selection"}).is_success
    finally:
        served.stop()
    assert niceness == [max(BACKGROUND_NICE, thread_nice())]
