"""A page sent by the extension is read out of the app's process, bounded (issue 38, item 8): one with more text
than a scrap may hold is refused before it is parsed, one that reads too slowly or needs too much memory is
refused and its reader replaced, and a selection sent while a huge page is being read is answered before it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from san_desktop.app import SanApp
from san_desktop.web.endpoint import BrowserCapture, CaptureEndpoint
from san_desktop.web.page_reader import PageReader, _Child
from tests.support.pages import many_elements
from tests.support.thread_priority import linux_only

TOKEN = "test-token-0123456789"
ANY_PORT = range(0, 1)  # a free port of the system's choosing
WAIT = 120.0  # for an answer: never reached when it works
ARTICLE = """<!DOCTYPE html><html><head><title>Checkpoints</title></head><body><article><h1>Checkpoints</h1>
<p>A checkpoint copies the pages of the write-ahead log back into the database file, so the log can be reset.</p>
</article></body></html>"""


class _WatchedReader(PageReader):
    """A real reader that says when a page starts being read."""

    def __init__(self, **bounds: Any) -> None:
        super().__init__(**bounds)
        self.reading = threading.Event()

    def read(self, url: str, markup: str, max_text: int) -> tuple[str, str]:
        self.reading.set()
        return super().read(url, markup, max_text)


def _endpoint(app: SanApp, reader: PageReader, **options: Any) -> CaptureEndpoint:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    return CaptureEndpoint(capture, lambda: TOKEN, ports=ANY_PORT, reader=reader, **options)


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[list[CaptureEndpoint]]:
    """Endpoints a test starts, stopped (with their readers' children) after it."""
    started: list[CaptureEndpoint] = []
    yield started
    for endpoint in started:
        endpoint.stop()


def _start(served: list[CaptureEndpoint], endpoint: CaptureEndpoint) -> CaptureEndpoint:
    endpoint.start()
    served.append(endpoint)
    return endpoint


def _send(endpoint: CaptureEndpoint, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v2/scraps",
        json=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=WAIT,
    )


def test_a_page_with_more_text_than_a_scrap_holds_is_refused_before_it_is_read(
    app: SanApp, served: list[CaptureEndpoint]
) -> None:
    reader = _WatchedReader()
    endpoint = _start(served, _endpoint(app, reader, max_text=20_000))
    page = "<html><body><script>var x = 1;</script>" + "<p>Raft elects a leader.</p>" * 2_000 + "</body></html>"
    answer = _send(endpoint, {"url": "https://a.example/long", "html": page, "kind": "page"})
    assert answer.status_code == 413
    assert answer.json()["error"].startswith("The page has too much text to scrap: about 0.04")
    assert "change capture.max_bytes in settings, or scrap a selection of it" in answer.json()["error"]
    assert reader.process_ids() == []  # refused by its size: no reader was started, nothing was parsed
    assert app.scraps.list_scraps() == []
    # a page within the limit is read and stored
    kept = _send(endpoint, {"url": "https://a.example/wal", "html": ARTICLE, "kind": "page"})
    assert kept.status_code == 200, kept.text
    assert "A checkpoint copies the pages" in app.scraps.get(kept.json()["scrap_id"]).content


def test_a_page_that_reads_too_slowly_is_refused_and_the_next_is_read_by_a_new_reader(
    app: SanApp, served: list[CaptureEndpoint]
) -> None:
    reader = PageReader(seconds=0.5)
    endpoint = _start(served, _endpoint(app, reader))
    slow = _send(endpoint, {"url": "https://a.example/slow", "html": many_elements(30_000), "kind": "page"})
    assert slow.status_code == 413
    assert slow.json()["error"] == (
        "Reading the page took longer than 0.5 s, so it was left out (scrap a selection of it instead)."
    )
    assert reader.process_ids() == []  # its reader was killed, not kept
    reader.seconds = 60.0
    kept = _send(endpoint, {"url": "https://a.example/wal", "html": ARTICLE, "kind": "page"})
    assert kept.status_code == 200, kept.text
    assert len(reader.process_ids()) == 1
    assert [scrap.source_ref for scrap in app.scraps.list_scraps()] == ["https://a.example/wal"]


@linux_only  # (the memory bound is an address-space limit: Linux and the BSDs have it, Windows not)
def test_a_page_that_needs_too_much_memory_to_read_is_refused(app: SanApp, served: list[CaptureEndpoint]) -> None:
    reader = PageReader(memory_bytes=200_000_000)
    endpoint = _start(served, _endpoint(app, reader))
    big = _send(endpoint, {"url": "https://a.example/big", "html": many_elements(100_000), "kind": "page"})
    assert big.status_code == 413
    assert big.json()["error"] == (
        "Reading the page needed more memory than SAN Desktop gives it (more than 200.0 MB), so it was left out "
        "(scrap a selection of it instead)."
    )
    assert reader.process_ids() == []
    kept = _send(endpoint, {"url": "https://a.example/wal", "html": ARTICLE, "kind": "page"})
    assert kept.status_code == 200, kept.text


def test_a_selection_sent_while_a_huge_page_is_read_is_answered_before_it(
    app: SanApp, served: list[CaptureEndpoint]
) -> None:
    reader = _WatchedReader()
    endpoint = _start(served, _endpoint(app, reader))
    page_answer: list[httpx.Response] = []

    def send_page() -> None:
        # (cut off when the test stops the endpoint: what matters is asserted before)
        with contextlib.suppress(httpx.HTTPError):
            page_answer.append(
                _send(endpoint, {"url": "https://a.example/huge", "html": many_elements(100_000), "kind": "page"})
            )

    page = threading.Thread(target=send_page)
    page.start()
    try:
        assert reader.reading.wait(WAIT)
        selection = _send(
            endpoint, {"url": "https://a.example/p", "selection": "Raft elects a leader.", "kind": "selection"}
        )
        assert selection.status_code == 200, selection.text
        # answered while the page was still being read
        assert page.is_alive()
        assert page_answer == []
        assert [scrap.content for scrap in app.scraps.list_scraps()] == ["Raft elects a leader."]
    finally:
        endpoint.stop()  # (its reader's child is killed: the page is answered as not read, or not at all)
        page.join(WAIT)


class _StoppedError(Exception):
    pass


def test_a_reading_its_caller_stops_ends_at_once_and_its_child_is_not_kept() -> None:
    """A link's fetch cancelled, or the app closing, while its page is read (``read_page``'s ``between``, which
    the job's cancel check is): the reading stops, not after the page's 9 s."""
    reader = PageReader()
    looks = 0

    def between() -> None:
        nonlocal looks
        looks += 1
        if looks > 5:  # about half a second into the reading
            raise _StoppedError

    try:
        with pytest.raises(_StoppedError):
            reader.read_page("https://a.example/huge", many_elements(100_000).encode(), between=between)
        assert reader.process_ids() == []  # killed mid-page: not trusted with the next
        title, text = reader.read_page("https://a.example/wal", ARTICLE.encode())
        assert (title, "A checkpoint copies the pages" in text) == ("Checkpoints", True)
    finally:
        reader.close()


def test_a_child_killed_by_the_reader_and_its_reading_thread_at_once_closes_its_pipe_once() -> None:
    """``PageReader.close`` and the thread whose reading it ended both kill the child: its pipe is closed once (a
    second close of the same descriptor failed the endpoint's stop, or closed a file another part had opened)."""
    child = _Child(None, 0)
    connection: Any = child._connection
    close_descriptor = connection._close
    closed_by: list[int] = []
    failures: list[BaseException] = []

    def kill() -> None:
        try:
            child.kill()
        except BaseException as exc:  # pragma: no cover - the failure this test is about
            failures.append(exc)

    other = threading.Thread(target=kill)

    def slow_close() -> None:
        closed_by.append(threading.get_ident())
        if len(closed_by) == 1:  # the other kill comes while this one closes the pipe
            other.start()
            other.join(1.0)
        close_descriptor()

    connection._close = slow_close
    kill()
    other.join(WAIT)
    assert failures == []
    assert len(closed_by) == 1
    assert not child.process.is_alive()
