"""A website on 127.0.0.1 for the link scraps: an article page with navigation, footer and scripts, and
the ways a page can fail (404, a 20 MB body, an image, a redirect loop, a server that never answers)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.support.local_http import serving

ARTICLE_TITLE = "Raft consensus explained"
ARTICLE = f"""<!doctype html><html><head><title>{ARTICLE_TITLE} | Dev Blog</title>
<meta property="og:title" content="{ARTICLE_TITLE}">
<script>var tracking = "a script's text";</script><style>nav {{ color: red }}</style></head>
<body><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li>
<li><a href="/archive">Archive of old posts</a></li></ul></nav>
<header><div class="site-name">Dev Blog</div></header>
<main><article><h1>{ARTICLE_TITLE}</h1>
<p>Raft elects a leader that accepts all writes and replicates its log to followers. A follower that hears
nothing from the leader for an election timeout becomes a candidate and asks the others for votes.</p>
<h2>Log replication</h2>
<p>The leader appends each command to its log and sends AppendEntries to every follower. An entry is
committed once a majority stored it, and only then applied to the state machine.</p>
<ul><li>Terms number each election.</li><li>A node votes at most once per term.</li></ul>
<pre><code>if term &gt; current_term:
    current_term = term
    voted_for = None</code></pre>
<p>Randomised election timeouts make split votes rare, so a new leader is usually found within one round.
In the reference code the node's __init__ sets current_term to 0 and starts as a follower.</p>
</article></main>
<footer><p>Copyright 2026 Dev Blog. Subscribe to our newsletter for weekly posts.</p></footer>
<script>console.log("analytics beacon")</script></body></html>"""
NAVIGATION_AND_FOOTER = ("About us", "Archive of old posts", "Subscribe to our newsletter", "analytics beacon")
HUGE_BYTES = 20_000_000


@dataclass
class Site:
    port: int
    requests: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # ends the never-answering page

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def website() -> Iterator[Site]:
    site = Site(0)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _send(self, status: int, content_type: str, body: bytes, *, length: bool = True) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            site.requests.append(self.path)
            path = self.path.split("?", 1)[0]
            if path.startswith("/post"):
                self._send(200, "text/html; charset=utf-8", ARTICLE.encode())
            elif path == "/notes.txt":
                self._send(200, "text/plain; charset=utf-8", b"SQLite WAL notes\n\nReaders keep reading.")
            elif path == "/missing":
                self._send(404, "text/html", b"<h1>Not found</h1>")
            elif path == "/image.png":
                self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
            elif path == "/huge":
                self._huge()
            elif path.startswith("/loop"):
                self.send_response(302)
                self.send_header("Location", "/loop-b" if path == "/loop-a" else "/loop-a")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path == "/silent":
                site.release.wait(30)  # never answers while the test runs
            else:
                self._send(404, "text/plain", b"no such page")

        def _huge(self) -> None:
            """20 MB of HTML with no Content-Length: only counting while reading can stop it."""
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = b"<p>" + b"x" * 65_530 + b"</p>"
            try:
                for _ in range(HUGE_BYTES // len(chunk) + 1):
                    self.wfile.write(chunk)
            except OSError:
                return  # the client stopped reading: as it should

    with serving(Handler) as port:
        site.port = port
        try:
            yield site
        finally:
            site.release.set()
