"""Random bytes and random Unicode (surrogates, controls, bidi overrides included) through the capture path,
the command line and the browser extension's endpoint (bodies and announced lengths): never a traceback,
never a partial row."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.enums import JobType
from san_desktop.core.text import RejectedContentError, decode_bytes
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, Scrap
from san_desktop.queue.store import JobStore
from san_desktop.services.scraps import ScrapService
from san_desktop.web.endpoint import BrowserCapture, CaptureEndpoint
from tests.support.jobs import fast_settings

SPECIALS = [
    "\x00", "\x1b[2J", "\x1b]0;t\x07", "\x1b]52;c;QUJD\x07", "\u202e", "\u2066", "\u200b", "\ufeff", "\r\n", "\r",
    "\x7f", "\x9b", "\ud800", "\udfff", "\U0001f600", "가", "\u0301", " ", "\t",
]  # fmt: skip
TEXTS = st.lists(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(SPECIALS),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.characters(max_codepoint=0x1F),
    ),
    max_size=12,
).map("".join)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _counts(db: Database) -> tuple[int, int, int]:
    with db.sessions() as session:
        scraps = session.scalar(sa.select(sa.func.count()).select_from(Scrap)) or 0
        rows = session.execute(sa.select(AsyncJob.job_type, sa.func.count()).group_by(AsyncJob.job_type)).all()
        per_type = {job_type: count for job_type, count in rows}
    return scraps, per_type.get(JobType.CARD_ANALYSIS, 0), per_type.get(JobType.SCRAP_REFINE, 0)


def _assert_whole(db: Database) -> None:
    """Every stored scrap came with its jobs: its analysis and its refinement, or (a link, whose page is to be
    downloaded first) its page's fetch; and no job came without its scrap."""
    with db.sessions() as session:
        stored = set(session.scalars(sa.select(Scrap.id)))
        jobs: dict[str, set[JobType]] = {}
        for target, job_type in session.execute(sa.select(AsyncJob.target_id, AsyncJob.job_type)):
            jobs.setdefault(target, set()).add(job_type)
    assert set(jobs) <= stored
    for scrap_id in stored:
        kinds = jobs.get(scrap_id, set())
        assert {JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE} <= kinds or JobType.PAGE_FETCH in kinds, kinds


@FUZZ
@given(text=TEXTS)
def test_random_text_is_stored_whole_or_refused(db: Database, text: str) -> None:
    service = ScrapService(db, JobStore(db, fast_settings()), max_bytes=2000)
    before = _counts(db)[0]
    try:
        result = service.capture(text)
    except RejectedContentError as exc:
        assert str(exc)
        assert _counts(db)[0] == before
    else:
        with db.sessions() as session:
            stored = session.get(Scrap, result.scrap_id)
            assert stored is not None
            assert stored.content.strip() == stored.content
    _assert_whole(db)


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_are_decoded_or_refused(db: Database, data: bytes) -> None:
    service = ScrapService(db, JobStore(db, fast_settings()), max_bytes=2000)
    try:
        service.capture(decode_bytes(data, "the file"))
    except RejectedContentError as exc:
        assert str(exc)
    _assert_whole(db)


@FUZZ
@given(text=TEXTS)
def test_random_text_on_the_command_line(db: Database, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["scrap", "add", "--text", text])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "Traceback" not in err
    if code == 1:
        assert err.startswith("san: ")
    for stream in (out, err):
        assert "\x1b" not in stream
        assert "\u202e" not in stream
    _assert_whole(db)


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_on_standard_input(
    db: Database, data: bytes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    with open(read_end, encoding="utf-8", errors="strict") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code = main(["scrap", "add", "-"])
    _out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "Traceback" not in err
    _assert_whole(db)


TOKEN = "fuzz-token-0123456789"
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=12,
)
CAPTURES = st.fixed_dictionaries(
    {"url": st.one_of(TEXTS, st.sampled_from(["https://a.example/p", "https://u:p@b.example/", "mailto:x@y"]))},
    optional={
        "kind": st.one_of(st.sampled_from(["page", "selection", "link"]), JSON_VALUES),
        "title": st.one_of(TEXTS, JSON_VALUES),
        "selection": st.one_of(TEXTS, JSON_VALUES),
        "html": st.one_of(TEXTS.map(lambda text: f"<html><body><p>{text}</p></body></html>"), JSON_VALUES),
    },
)
BODIES = st.one_of(
    st.binary(max_size=300),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    CAPTURES.map(lambda value: json.dumps(value).encode()),
    st.integers(min_value=1, max_value=5_000).map(lambda depth: b"[" * depth),
)


@pytest.fixture
def endpoint(app: SanApp) -> Iterator[CaptureEndpoint]:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    served = CaptureEndpoint(capture, lambda: TOKEN, ports=range(0, 1), max_body=100_000)
    served.start()
    yield served
    served.stop()


def _no_failure_logged(caplog: pytest.LogCaptureFixture) -> None:
    assert [record.getMessage() for record in caplog.records if record.levelname in ("ERROR", "CRITICAL")] == []


@FUZZ
@given(body=BODIES)
@example(body=json.dumps({"url": "https://a.example/p", "kind": "link"}).encode())  # a link: its page is fetched
def test_random_bodies_sent_to_the_endpoint_are_stored_whole_or_refused_in_a_sentence(
    db: Database, endpoint: CaptureEndpoint, caplog: pytest.LogCaptureFixture, body: bytes
) -> None:
    caplog.clear()
    answer = httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v2/scraps",
        content=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
    )
    assert answer.status_code in (200, 400, 413), answer.text
    if answer.status_code != 200:
        assert answer.json()["error"].strip()
    _no_failure_logged(caplog)
    _assert_whole(db)


@FUZZ
@given(length=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30))
def test_random_announced_lengths_are_answered_in_a_sentence(
    endpoint: CaptureEndpoint, caplog: pytest.LogCaptureFixture, length: str
) -> None:
    caplog.clear()
    body = b'{"url": "https://a.example/", "kind": "link"}'
    with socket.create_connection(("127.0.0.1", endpoint.port or 0), timeout=30) as connection:
        connection.sendall(
            f"POST /v2/scraps HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
            + body
        )
        connection.shutdown(socket.SHUT_WR)  # (a server reading to the end of the stream gets there)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    assert status in (200, 400, 411, 413), answer
    _no_failure_logged(caplog)
