"""Random bytes and random Unicode (surrogates, controls, bidi overrides included) through the capture path
and the command line: never a traceback, never a partial row."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from san_desktop.cli.main import main
from san_desktop.core.enums import JobType
from san_desktop.core.text import RejectedContentError, decode_bytes
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, Scrap
from san_desktop.queue.job_queue import JobQueue
from san_desktop.services.scraps import ScrapService
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
    scraps, analyses, refines = _counts(db)
    assert scraps == analyses == refines  # every stored scrap came with both of its jobs


@FUZZ
@given(text=TEXTS)
def test_random_text_is_stored_whole_or_refused(db: Database, text: str) -> None:
    service = ScrapService(db, JobQueue(db, fast_settings()), max_bytes=2000)
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
    service = ScrapService(db, JobQueue(db, fast_settings()), max_bytes=2000)
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
