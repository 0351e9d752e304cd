"""A website on 127.0.0.1 for the link scraps: an article page with navigation, footer and scripts, and
the ways a page can fail (404, a 20 MB body, an image, a redirect loop, a server that never answers) or
attack (a decompression bomb, headers sent one line at a time, redirects anywhere, binary bodies)."""

from __future__ import annotations

import functools
import ssl
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, urlsplit

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
ELF_PROGRAM = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + bytes(range(256)) * 4
PDF_DOCUMENT = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" * 20
SLOW_HEADER_LINES = 100  # one every ``Site.header_pace`` seconds, then the article


@dataclass(frozen=True)
class Page:
    body: bytes
    content_type: str | None = "text/html; charset=utf-8"  # None: no Content-Type header at all
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Site:
    port: int
    requests: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # ends the never-answering page
    header_pace: float = 0.2  # /slow-headers: the pause before each header line
    pages: dict[str, Page] = field(default_factory=dict)  # a test's own pages, by path
    scheme: str = "http"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def serve(self, path: str, page: Page) -> str:
        self.pages[path] = page
        return self.url(path)


def many_elements(count: int) -> str:
    """A page of ``count`` small elements and little text: cheap to send, slow and large to parse (100,000
    took 9 s and 460 MB to read here)."""
    return "<html><body>" + "<div class='x'><span>a</span></div>" * count + "</body></html>"


@functools.cache
def gzip_bomb(inflated: int = 4 << 30) -> bytes:
    """gzip of a gzip of ``inflated`` zero bytes (4 GiB: about 10 KB on the wire). The inner stream is one
    fully flushed deflate block of 1 MiB of zeros repeated: compressing 4 GiB for real takes a minute."""
    block = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    compressed_block = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(inflated // len(block)):
        crc = zlib.crc32(block, crc)
    inner = b"".join(
        (
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff",  # gzip header: deflate, no name, no time
            compressed_block * (inflated // len(block)),
            compressor.flush(),  # the final (empty) block
            struct.pack("<II", crc, inflated & 0xFFFFFFFF),
        )
    )
    outer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return outer.compress(inner) + outer.flush()


@contextmanager
def website(tls: ssl.SSLContext | None = None) -> Iterator[Site]:
    site = Site(0, scheme="https" if tls else "http")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _send(
            self,
            status: int,
            content_type: str | None,
            body: bytes,
            *,
            length: bool = True,
            headers: tuple[tuple[str, str], ...] = (),
        ) -> None:
            self.send_response(status)
            if content_type is not None:
                self.send_header("Content-Type", content_type)
            for name, value in headers:
                self.send_header(name, value)
            if length:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            site.requests.append(self.path)
            path = self.path.split("?", 1)[0]
            if path in site.pages:
                page = site.pages[path]
                self.send_response(200)
                if page.content_type is not None:
                    self.send_header("Content-Type", page.content_type)
                for name, value in page.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                self.wfile.write(page.body)
            elif path.startswith("/hops/"):
                self._hop(int(path.removeprefix("/hops/")))
            elif path == "/slow-headers":
                self._slow_headers()
            elif path == "/bomb":
                self._send(200, "text/html", gzip_bomb(), headers=(("Content-Encoding", "gzip, gzip"),))
            elif path == "/program":
                self._send(200, None, ELF_PROGRAM)
            elif path == "/fake.html":
                self._send(200, "text/html; charset=utf-8", PDF_DOCUMENT)
            elif path.startswith("/post"):
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

        def _hop(self, left: int) -> None:
            """/hops/N?to=URL: N redirects on this site, then one to URL (anywhere: another port, data:)."""
            target = parse_qs(urlsplit(self.path).query)["to"][0]
            self.send_response(302)
            self.send_header("Location", f"/hops/{left - 1}?to={quote(target)}" if left else target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _slow_headers(self) -> None:
            """Each header line in time to beat any read timeout, so only a limit on the whole request
            stops it (the pace is the server's own: it ends at once when the test releases it)."""
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
                for line in range(SLOW_HEADER_LINES):
                    if site.release.wait(site.header_pace):
                        return
                    self.wfile.write(f"X-Slow-{line}: {line}\r\n".encode())
                body = ARTICLE.encode()
                self.wfile.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            except OSError:
                return  # the client gave up: as it should

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

    with serving(Handler, tls) as port:
        site.port = port
        try:
            yield site
        finally:
            site.release.set()
