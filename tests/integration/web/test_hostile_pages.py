"""The web is hostile (issue 23): a decompression bomb, headers sent one line at a time, redirects to local
addresses, binary bodies labelled as pages, redirects to what is not a web address. Each against a real
server on 127.0.0.1; the redirects start from a made-up public site (``FakeInternet``) so the address policy
sees what it would see on the internet."""

from __future__ import annotations

import codecs
import gzip
import random
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from san_desktop.web.extract import readable_page
from san_desktop.web.fetch import PageFetchError, PageUnreachableError, download
from tests.support.internet import PUBLIC_NAME, FakeInternet
from tests.support.pages import ARTICLE, ARTICLE_TITLE, ELF_PROGRAM, PDF_DOCUMENT, Page, Site, gzip_bomb, website
from tests.support.processes import run_python
from tests.support.tls import server_context

MAX_BYTES = 5_000_000
KOREAN_TITLE = "래프트 합의 알고리즘"
KOREAN = (
    f"<html><head><title>{KOREAN_TITLE}</title></head><body><article><h1>{KOREAN_TITLE}</h1>"
    + "<p>래프트는 리더를 선출하고 리더는 팔로워에게 로그를 복제합니다. 과반수가 저장하면 커밋됩니다.</p>" * 5
    + "</article></body></html>"
)


@pytest.fixture
def site() -> Iterator[Site]:
    with website() as served:
        yield served


@pytest.fixture
def intranet() -> Iterator[Site]:
    """Another server on 127.0.0.1: what a redirect must not reach from a public page."""
    with website() as served:
        yield served


# -- 8. decompression bomb ------------------------------------------------------------------------------

_BOMB_FETCH = """
import resource, sys
# a fix that fails must not take the shared machine with it: the child may not grow past 2 GiB
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from san_desktop.web.fetch import download
try:
    download(sys.argv[1], max_bytes=5_000_000, timeout=30)
    print("downloaded")
except Exception as exc:
    print(type(exc).__name__, exc)
# the peak of this process's own memory (ru_maxrss would count the forked test process's before exec)
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))  # KiB
"""


def test_a_decompression_bomb_stops_at_the_size_limit_with_little_memory(site: Site) -> None:
    assert len(gzip_bomb()) < 20_000  # "gzip, gzip" of 4 GiB of zeros (made before the child asks for it)
    result = run_python(["-c", _BOMB_FETCH, site.url("/bomb")], timeout=120)
    assert result.returncode == 0, result.stderr
    outcome, peak_kib = result.stdout.splitlines()
    assert outcome == "PageTooLargeError The page is larger than 5.0 MB (change capture.fetch_max_bytes in settings)."
    assert int(peak_kib) * 1024 < 100_000_000


def test_more_than_two_layers_of_packing_are_refused(site: Site) -> None:
    body = ARTICLE.encode()
    for _ in range(3):
        body = gzip.compress(body)
    url = site.serve("/packed", Page(body, headers=(("Content-Encoding", "gzip, gzip, gzip"),)))
    with pytest.raises(PageFetchError, match=r"packed the page 3 times \(gzip, gzip, gzip\); .* at most 2"):
        download(url, max_bytes=MAX_BYTES, timeout=5)


def test_a_packing_that_was_not_asked_for_is_refused(site: Site) -> None:
    url = site.serve("/brotli", Page(b"\x1b\x03\x00\xf8" * 10, headers=(("Content-Encoding", "br"),)))
    with pytest.raises(PageFetchError, match="packed as br, which SAN Desktop cannot unpack"):
        download(url, max_bytes=MAX_BYTES, timeout=5)


def test_damaged_packing_is_refused_with_a_sentence(site: Site) -> None:
    broken = gzip.compress(ARTICLE.encode())[:40] + b"\xff" * 200
    url = site.serve("/broken", Page(broken, headers=(("Content-Encoding", "gzip"),)))
    with pytest.raises(PageFetchError, match="sent the page as damaged gzip data") as caught:
        download(url, max_bytes=MAX_BYTES, timeout=5)
    assert isinstance(caught.value.__cause__, zlib.error)  # the cause kept for the job's record


# -- 9. slow headers ------------------------------------------------------------------------------------


def test_a_server_sending_its_headers_slowly_is_dropped_at_the_whole_request_limit(site: Site) -> None:
    # each header line comes 0.2 s after the last: no read ever waits its 1 s, only the whole limit (3 s) ends it
    site.header_pace = 0.2
    started = time.monotonic()
    with pytest.raises(PageUnreachableError, match=r"whole-request limit of 3 s \(three times"):
        download(site.url("/slow-headers"), max_bytes=MAX_BYTES, timeout=1.0)
    assert time.monotonic() - started < 3 + 5  # dropped at the limit, not after the server's 20 s


def test_a_page_that_never_answers_still_fails_on_the_read_timeout(site: Site) -> None:
    with pytest.raises(PageUnreachableError, match=r"did not answer within 0\.5 s"):
        download(site.url("/silent"), max_bytes=MAX_BYTES, timeout=0.5)


# -- 10. redirects to local addresses ---------------------------------------------------------------------

LOCAL_TARGETS = [
    "http://127.0.0.1:{port}/post/intranet",
    "http://localhost:{port}/post/intranet",
    "http://2130706433:{port}/post/intranet",  # 127.0.0.1 as one decimal number
    "http://0x7f000001:{port}/post/intranet",
    "http://0.0.0.0:{port}/post/intranet",  # Linux connects it to this machine
    "http://[::ffff:127.0.0.1]:{port}/post/intranet",
    "http://[::1]:{port}/post/intranet",
    "http://10.20.30.40/post/intranet",
    "http://169.254.169.254/latest/meta-data/",  # a cloud machine's secrets
    "http://192.168.1.1/",
    "http://172.16.5.4/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
]


@pytest.mark.parametrize("target", LOCAL_TARGETS)
def test_a_redirect_from_a_public_page_to_a_local_address_is_refused(site: Site, intranet: Site, target: str) -> None:
    to = target.format(port=intranet.port)
    url = site.url(f"/hops/4?to={quote(to)}", PUBLIC_NAME)
    with pytest.raises(PageFetchError, match=r"The page redirects to a local or private address \(") as caught:
        download(url, max_bytes=MAX_BYTES, timeout=1.0, network=FakeInternet())
    assert str(caught.value).endswith(
        "SAN Desktop follows redirects only to public addresses. Scrap that address itself if you mean it."
    )
    assert len(site.requests) == 5  # the scrapped page and its four hops
    assert intranet.requests == []  # never asked


def test_a_redirect_between_public_pages_is_followed(site: Site) -> None:
    url = site.url(f"/hops/2?to={quote(site.url('/post/raft', PUBLIC_NAME))}", PUBLIC_NAME)
    page = download(url, max_bytes=MAX_BYTES, timeout=5, network=FakeInternet())
    assert page.url == site.url("/post/raft", PUBLIC_NAME)
    assert readable_page(page)[0] == ARTICLE_TITLE


def test_a_local_address_scrapped_on_purpose_is_fetched_with_its_local_redirects(site: Site, intranet: Site) -> None:
    url = site.url(f"/hops/1?to={quote(intranet.url('/post/intranet'))}")
    page = download(url, max_bytes=MAX_BYTES, timeout=5, network=FakeInternet())
    assert readable_page(page)[0] == ARTICLE_TITLE
    assert intranet.requests == ["/post/intranet"]


@pytest.mark.parametrize(
    "to", ["data:text/html,<h1>hi</h1>", "data:text/html;base64,PGgxPmhpPC9oMT4=", "file:///etc/passwd"]
)
def test_a_redirect_to_what_is_not_a_web_address_says_so(site: Site, to: str) -> None:
    scheme = to.split(":", 1)[0]
    with pytest.raises(PageFetchError, match=f"The link redirects to a {scheme}: address; only http and https"):
        download(site.url(f"/hops/0?to={quote(to)}"), max_bytes=MAX_BYTES, timeout=5)


@pytest.mark.parametrize("to", ["http://[::1/", "http://example.com:99999/"])
def test_a_redirect_to_a_broken_address_says_so(site: Site, to: str) -> None:
    with pytest.raises(PageFetchError, match="The page redirects to an address that is not valid"):
        download(site.url(f"/hops/0?to={quote(to)}"), max_bytes=MAX_BYTES, timeout=5)


# -- 11. binary bodies -----------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(200)
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256))


@pytest.mark.parametrize(
    ("page", "kind"),
    [
        (Page(ELF_PROGRAM, None), "an ELF program"),
        (Page(ELF_PROGRAM, "text/html"), "an ELF program, though the server calls it text/html"),
        (Page(PDF_DOCUMENT, "text/html; charset=utf-8"), "a PDF document, though the server calls it text/html"),
        (Page(PNG, "text/plain"), "a PNG image"),
        (Page(ZIP, "text/html"), "a ZIP archive"),
        (Page(gzip.compress(ARTICLE.encode()), "text/html"), "gzip data"),  # packed, but not said so
        (Page(random.Random(23).randbytes(6000), None), "binary data"),
    ],
)
def test_a_binary_body_is_not_a_web_page_whatever_its_label(site: Site, page: Page, kind: str) -> None:
    with pytest.raises(PageFetchError, match="The link is not a web page") as caught:
        download(site.serve("/body", page), max_bytes=MAX_BYTES, timeout=5)
    assert f"({kind}" in str(caught.value)


@pytest.mark.parametrize(
    ("page", "title"),
    [
        (Page(ARTICLE.encode()), ARTICLE_TITLE),
        (Page(ARTICLE.encode(), None), ARTICLE_TITLE),  # no Content-Type: HTML by its look
        (Page(KOREAN.encode("euc-kr"), "text/html; charset=euc-kr"), KOREAN_TITLE),
        (Page(KOREAN.encode("euc-kr"), "text/html"), KOREAN_TITLE),  # no charset said
        (Page(codecs.BOM_UTF16_LE + KOREAN.encode("utf-16-le"), "text/html"), KOREAN_TITLE),
        (Page(gzip.compress(ARTICLE.encode()), headers=(("Content-Encoding", "gzip"),)), ARTICLE_TITLE),
        (Page(gzip.compress(ARTICLE.encode()), headers=(("Content-Encoding", "x-gzip"),)), ARTICLE_TITLE),
        (Page(zlib.compress(ARTICLE.encode()), headers=(("Content-Encoding", "deflate"),)), ARTICLE_TITLE),
        (Page(zlib.compress(ARTICLE.encode())[2:-4], headers=(("Content-Encoding", "deflate"),)), ARTICLE_TITLE),
        (
            Page(gzip.compress(gzip.compress(ARTICLE.encode())), headers=(("Content-Encoding", "gzip, gzip"),)),
            ARTICLE_TITLE,
        ),
    ],
)
def test_web_pages_in_any_encoding_and_packing_still_pass(site: Site, page: Page, title: str) -> None:
    downloaded = download(site.serve("/page", page), max_bytes=MAX_BYTES, timeout=5)
    assert readable_page(downloaded)[0] == title


class _SilentResolver(FakeInternet):
    """A name server that does not answer until the test ends (an attacker's own, say)."""

    def __init__(self, answer: threading.Event) -> None:
        self.answer = answer

    def resolve(self, host: str, port: int) -> list[str]:
        self.answer.wait(60)
        return super().resolve(host, port)


def test_a_name_that_does_not_resolve_in_time_is_dropped_at_the_timeout(site: Site) -> None:
    answer = threading.Event()
    started = time.monotonic()
    try:
        with pytest.raises(PageUnreachableError, match=r"did not answer within 0\.5 s"):
            download(
                site.url("/post/raft", PUBLIC_NAME), max_bytes=MAX_BYTES, timeout=0.5, network=_SilentResolver(answer)
            )
        assert time.monotonic() - started < 1.5 + 5  # not the resolver's 60 s
    finally:
        answer.set()


# -- https: dialled to the checked address, verified against the name ------------------------------------


@pytest.mark.parametrize(("certified", "fetched"), [(PUBLIC_NAME, True), ("someone-else.example", False)])
def test_an_https_page_is_verified_against_its_name_though_dialled_by_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, certified: str, fetched: bool
) -> None:
    context, authority = server_context(certified, tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))  # the test authority, as a company's own would be
    with website(tls=context) as secure:
        url = secure.url("/post/raft", PUBLIC_NAME)
        if fetched:
            assert (
                readable_page(download(url, max_bytes=MAX_BYTES, timeout=5, network=FakeInternet()))[0] == ARTICLE_TITLE
            )
        else:
            with pytest.raises(PageUnreachableError, match="Hostname mismatch"):
                download(url, max_bytes=MAX_BYTES, timeout=5, network=FakeInternet())
