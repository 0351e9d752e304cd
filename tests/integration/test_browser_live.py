"""Issue 29's real browser: Debian's chromium with the unpacked extension (driven by playwright-core from
tests/browser), a page served on 127.0.0.1 whose article is written by its JavaScript after load, *Scrap this
page* pressed: the scrap holds that article, which a download of the same address would not. Another program
squats a lower port of the range (issue 38): the extension's proof, computed by Chromium's WebCrypto, passes it
over — it receives neither the token nor the page — and its options page names that port."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import JobType
from san_desktop.web.endpoint import PORTS, BrowserCapture, CaptureEndpoint
from san_desktop.web.extract import readable_page
from san_desktop.web.fetch import Download
from tests.support.jobs import jobs_of
from tests.support.local_http import serving
from tests.support.squatter import Squatter, squatting

ROOT = Path(__file__).parents[2]
DRIVER = ROOT / "tests" / "browser" / "scrap_page.js"
EXTENSION = ROOT / "browser-extension"
TOKEN = "live-test-token-0123456789abcdef"
ARTICLE = "Raft keeps a replicated log consistent by electing a leader that appends entries for its followers."
# the page as a server sends it: the article arrives only when its script runs (here from base64, so that
# no download can read it), as on the many sites that build their page in the browser
PAGE = f"""<!DOCTYPE html><html><head><title>Consensus notes</title></head><body>
<nav>Home | Notes</nav><main id="main">Loading…</main>
<script>
setTimeout(() => {{
  const bytes = Uint8Array.from(atob("{base64.b64encode(ARTICLE.encode()).decode()}"), c => c.charCodeAt(0));
  const article = new TextDecoder().decode(bytes);
  document.getElementById("main").innerHTML =
    "<article><h1>How Raft agrees</h1><p>" + article + "</p>" +
    "<p>A follower that hears from no leader for an election timeout becomes a candidate.</p></article>";
}}, 300);
</script></body></html>"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGE.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def squatter() -> Iterator[Squatter]:
    with squatting("lying") as holding:
        yield holding


@pytest.fixture
def endpoint(app: SanApp, squatter: Squatter) -> Iterator[CaptureEndpoint]:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    served = CaptureEndpoint(capture, lambda: TOKEN, ports=range(squatter.port + 1, PORTS.stop))
    served.start()
    yield served
    served.stop()


def test_the_page_as_the_browser_rendered_it_becomes_the_scrap(
    app: SanApp, endpoint: CaptureEndpoint, squatter: Squatter, tmp_path: Path
) -> None:
    with serving(_Page) as port:
        url = f"http://127.0.0.1:{port}/notes/raft"
        downloaded = httpx.get(url)
        assert ARTICLE not in downloaded.text  # a download of the address has no article
        assert ARTICLE not in readable_page(Download(url, "text/html", "utf-8", downloaded.content))[1]
        driven = subprocess.run(
            ["node", str(DRIVER), str(EXTENSION), url, TOKEN, str(tmp_path / "profile"), "How Raft agrees"],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert driven.returncode == 0, driven.stderr
    badge = json.loads(driven.stdout.strip().splitlines()[-1])
    assert badge["text"] == "✓", badge
    # (a port below the squatter's may be held too, by another program of this machine: passed over as well)
    assert "Passed over port" in badge["title"]
    assert str(squatter.port) in badge["title"]
    assert (
        f"Port {squatter.port}: answered with a proof that does not match this token. Nothing was sent to it."
        in badge["skipped"]
    )
    seen = squatter.text()
    assert seen.startswith("GET /v2/hello?nonce="), seen
    for secret in (TOKEN, "Authorization", url, ARTICLE, "POST"):
        assert secret not in seen
    [scrap] = app.scraps.list_scraps()
    assert ARTICLE in scrap.content
    assert "Loading…" not in scrap.content
    assert scrap.source_ref == url
    assert {job.job_type for job in jobs_of(app.queue) if job.target_id == scrap.id} == {
        JobType.CARD_ANALYSIS,
        JobType.SCRAP_REFINE,
    }  # no download: the page came from the browser
