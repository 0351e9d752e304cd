"""Errors a person reads carry no exception class names (issue 24, item 5): a page that was not found and
an AI server's error answer, recorded as the product records them, read as sentences in the Inbox, on the
Jobs page (list, details, failure groups) and in `san jobs`; the class names of foreign causes stay in what
is copied for a bug report."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings
from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.enums import JOB_POOLS, ErrorKind, JobType
from san_desktop.queue.records import Classification
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.web.errors import PageFetchError
from tests.support.openai_server import FakeOpenAI, fake_openai_server

CLASS_NAME = re.compile(r"\b\w+(?:Error|Exception)\b")  # OSError, HTTPStatusError; not "Error:"
NOT_FOUND = "The page was not found (HTTP 404)."


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


def _fail(app: SanApp, job_type: JobType, exc: BaseException) -> str:
    """The next job of ``job_type`` failed for good with ``exc``, recorded as the runner records it."""
    claim = app.queue.claim_next(app.backend.require_session(), JOB_POOLS[job_type], {job_type})
    assert claim is not None
    assert app.queue.fail(claim, exc, Classification(ErrorKind.PERMANENT)) is not None
    return claim.job.id


def _ai_server_error(server: FakeOpenAI) -> BaseException:
    """What the OpenAI-compatible provider raises for a 400 answer (a model the server does not have)."""
    server.behaviour = "400"
    provider = OpenAICompatibleProvider(OpenAISettings(server.url, "gpt-test", "embed-test", None, 5.0))
    try:
        provider.analyze_card("SQLite is an embedded database.", ["Databases", "Other"])
    except Exception as exc:
        return exc
    finally:
        provider.close()
    raise AssertionError("the server's 400 was not an error")


@pytest.fixture
def failed(app: SanApp, server: FakeOpenAI) -> dict[str, str]:
    link = app.capture_url("https://example.invalid/gone").value.scrap_id
    fetch = _fail(app, JobType.PAGE_FETCH, PageFetchError(NOT_FOUND))
    note = app.capture_text("A note about SQLite and its write-ahead log.").value.scrap_id
    analysis = _fail(app, JobType.CARD_ANALYSIS, _ai_server_error(server))
    return {"link": link, "fetch": fetch, "note": note, "analysis": analysis}


def _no_class_name(text: str) -> None:
    assert not CLASS_NAME.search(text), text


def test_the_inbox_says_why_in_sentences(qtbot: QtBot, context: AppContext, failed: dict[str, str]) -> None:
    page = InboxPage(context)
    qtbot.addWidget(page)
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=5_000)
    for scrap in ("link", "note"):
        row = page.model.position_of(failed[scrap])
        assert row is not None
        card = page.model.index(row, 3)
        _no_class_name(page.model.data(card))
        _no_class_name(page.model.data(card, Qt.ItemDataRole.ToolTipRole))
    row = page.model.position_of(failed["note"])
    assert row is not None
    said = page.model.data(page.model.index(row, 3))
    assert said.startswith("Analysis failed: HTTP 400 Bad Request from http://127.0.0.1:"), said
    assert "Invalid model 'gpt-test'" in said  # the server's own explanation


def test_the_jobs_page_says_why_in_sentences_and_copies_the_types_for_a_report(
    qtbot: QtBot, context: AppContext, app: SanApp, failed: dict[str, str]
) -> None:
    page = JobsPage(context)
    qtbot.addWidget(page)
    qtbot.waitUntil(lambda: None not in (page.model.row_of(failed["fetch"]), page.model.row_of(failed["analysis"])))
    for job in ("fetch", "analysis"):
        row = page.model.row_of(failed[job])
        assert row is not None
        error = page.model.index(row, 5)
        _no_class_name(page.model.data(error))
        _no_class_name(page.model.data(error, Qt.ItemDataRole.ToolTipRole))
        assert page.select_job(failed[job])
        qtbot.waitUntil(lambda: "Attempts" in page.details.toPlainText(), timeout=5_000)
        qtbot.waitUntil(lambda: "#1" in page.details.toPlainText(), timeout=5_000)
        _no_class_name(page.details.toPlainText())
    assert NOT_FOUND in page.model.data(page.model.index(page.model.row_of(failed["fetch"]) or 0, 5))

    page.tabs.setCurrentWidget(page.failures)
    qtbot.waitUntil(lambda: len(page.failures.groups) == 2, timeout=5_000)
    for row in range(2):
        _no_class_name(page.failures.table.item(row, 4).text())  # type: ignore[union-attr]
        page.failures.table.selectRow(row)
        _no_class_name(page.failures.example.toPlainText())
    # the recorded chain keeps the foreign cause's type, for a bug report
    assert "HTTPStatusError" in (app.queue.get(failed["analysis"]).error_message or "")


def test_san_jobs_says_why_in_sentences(
    app: SanApp, failed: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    for command in (["jobs", "list"], ["jobs", "show", failed["analysis"]], ["jobs", "failures"]):
        assert main(["--data-dir", str(app.data_dir), *command]) == 0
        out = capsys.readouterr().out
        _no_class_name(out)
    assert main(["--data-dir", str(app.data_dir), "jobs", "show", failed["fetch"]]) == 0
    assert f"Error:      {NOT_FOUND}" in capsys.readouterr().out
    assert main(["--data-dir", str(app.data_dir), "jobs", "show", failed["analysis"], "--json"]) == 0
    assert "HTTPStatusError" in capsys.readouterr().out  # the record as it is, for a report
