"""The TIL page: Generate shows the steps and then the rendered note; a failed step shows its error and
Retry resumes it; what the note renders can run nothing and load nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QTextBrowser, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.ai.base import KeptParts, TilCard, TilDraft
from san_desktop.ai.local import LocalProvider
from san_desktop.core.errors import PermanentError
from san_desktop.core.markdown_html import to_safe_html
from san_desktop.core.workflow import TilStatus
from san_desktop.jobs.registry import JobProgress
from san_desktop.services.til import TilView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.til.page import TilPage
from tests.support.openai_server import FakeOpenAI, fake_openai_server
from tests.support.til import til_text


class _FlakyWriter(LocalProvider):
    def __init__(self) -> None:
        self.broken = True

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        if self.broken:
            raise PermanentError("the model refused to write today")
        return super().write_til(day, cards, kept)


class _LateRead:
    """``TilService.get`` whose first call reads at once but answers only once released: a slow read."""

    def __init__(self, get: Callable[[str], TilView]) -> None:
        self._get = get
        self._first = True
        self.read = threading.Event()
        self.release = threading.Event()

    def __call__(self, local_date: str) -> TilView:
        first, self._first = self._first, False
        try:
            return self._get(local_date)
        finally:
            if first:
                self.read.set()
                assert self.release.wait(20)


class _Hides(QObject):
    """Counts the times ``widget`` is hidden."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        self.count += event.type() == QEvent.Type.Hide
        return False


class _HeldWriter(LocalProvider):
    def __init__(self) -> None:
        self.drafting = threading.Event()
        self.release = threading.Event()

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        self.drafting.set()
        assert self.release.wait(20)
        return super().write_til(day, cards, kept)


@pytest.fixture
def page(qtbot: QtBot, live_context: AppContext) -> TilPage:
    for text in (
        "SQLite WAL mode lets readers continue while a writer commits to the database.",
        "Raft elects a leader; the leader replicates its log to followers.",
    ):
        live_context.app.capture_text(text)
    widget = TilPage(live_context)
    qtbot.addWidget(widget)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    qtbot.waitUntil(lambda: len(live_context.app.cards.list_cards()) == 2, timeout=20_000)
    widget.reload_days()
    qtbot.waitUntil(lambda: widget.days.count() == 1 and widget._day is not None, timeout=5_000)
    qtbot.waitUntil(widget.generate_button.isEnabled, timeout=5_000)  # the day's state is read: as a user sees it
    return widget


def test_generate_shows_each_step_then_the_rendered_til(qtbot: QtBot, page: TilPage, live_context: AppContext) -> None:
    steps: list[JobProgress] = []
    live_context.runner.job_progress.connect(steps.append)
    page.generate_button.click()
    qtbot.waitUntil(lambda: "TIL " in page.text.toPlainText(), timeout=20_000)
    assert [(p.step, p.index, p.total) for p in steps] == [
        ("collect", 1, 4),
        ("draft", 2, 4),
        ("embed", 3, 4),
        ("link", 4, 4),
    ]
    assert "Databases" in page.text.toPlainText()
    assert page.versions.count() == 1
    assert page.progress.isHidden()
    assert page.generate_button.isEnabled()


def test_a_failed_step_shows_its_error_and_retry_resumes(
    qtbot: QtBot, page: TilPage, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _FlakyWriter()
    monkeypatch.setattr(live_context.app.providers, "_provider", writer)
    page.generate_button.click()
    qtbot.waitUntil(lambda: not page.retry_button.isHidden(), timeout=20_000)
    assert "Failed at the draft step" in page.state.text()
    assert "the model refused to write today" in page.state.text()

    writer.broken = False
    page.retry_button.click()
    qtbot.waitUntil(lambda: "TIL " in page.text.toPlainText(), timeout=20_000)
    assert page.retry_button.isHidden()
    view = live_context.app.til.get(page._day or "")
    assert view.status is TilStatus.COMPLETED


def test_an_earlier_read_answering_late_never_hides_retry(
    qtbot: QtBot, page: TilPage, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_context.app.providers, "_provider", _FlakyWriter())
    late = _LateRead(live_context.app.til.get)
    monkeypatch.setattr(live_context.app.til, "get", late)
    page.refresh_page()  # reads the day (no TIL yet), and answers only after what follows
    qtbot.waitUntil(late.read.is_set, timeout=5_000)
    page.generate_button.click()
    qtbot.waitUntil(lambda: not page.retry_button.isHidden(), timeout=20_000)
    hidden = _Hides(page.retry_button)
    late.release.set()
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)  # the late answer has come
    assert hidden.count == 0  # not even for a moment (a later read could show it again)
    assert "Failed at the draft step" in page.state.text()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


def test_a_til_cancelled_while_drafting_shows_the_failure_and_retry_resumes(
    qtbot: QtBot, page: TilPage, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _HeldWriter()
    monkeypatch.setattr(live_context.app.providers, "_provider", writer)
    page.generate_button.click()
    try:
        qtbot.waitUntil(writer.drafting.is_set, timeout=20_000)
        assert page._day is not None
        job_id = live_context.app.til.get(page._day).active_job_id
        assert job_id is not None
        live_context.app.cancel_job(job_id)  # as the job monitor does
        qtbot.waitUntil(lambda: not page.retry_button.isHidden(), timeout=20_000)
        assert page.state.text() == "Failed at the draft step: Cancelled while the draft step ran."
    finally:
        writer.release.set()
    page.retry_button.click()
    qtbot.waitUntil(lambda: "TIL " in page.text.toPlainText(), timeout=20_000)
    assert page.retry_button.isHidden()


def test_a_note_with_scripts_images_and_javascript_links_renders_inert(qtbot: QtBot, server: FakeOpenAI) -> None:
    hostile = (
        "# TIL\n\n<script>alert('owned')</script>\n\n"
        f'<img src="{server.url}/pixel.png"> ![tracker]({server.url}/tracker.png)\n\n'
        "[click me](javascript:alert(1)) [fine](https://sqlite.org/wal.html)\n"
    )
    rendered = to_safe_html(hostile)
    assert "<script" not in rendered
    assert "<img" not in rendered
    assert "javascript:" not in rendered
    assert 'href="https://sqlite.org/wal.html"' in rendered
    view = QTextBrowser()
    qtbot.addWidget(view)
    view.setOpenLinks(False)
    view.setHtml(rendered)
    view.show()
    qtbot.waitExposed(view)
    assert "owned" not in view.toPlainText()
    assert not server.received.wait(0.5)  # nothing reached the server
    assert server.requests == []


@pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a window it shows
def test_the_version_box_shows_its_versions_whole(qtbot: QtBot, page: TilPage, live_context: AppContext) -> None:
    """It was cut ("v2 editec"): shown while it was empty, the box kept that width."""
    page.show()
    qtbot.waitExposed(page)
    page.generate_button.click()
    qtbot.waitUntil(lambda: page.versions.count() == 1, timeout=20_000)
    day = live_context.app.til.today()
    live_context.app.save_til_edit(day, til_text(live_context.app, day) + "\nOne more thing.\n")
    page.reload_days()
    qtbot.waitUntil(lambda: page.versions.count() == 2, timeout=10_000)
    longest = max(page.versions.fontMetrics().horizontalAdvance(page.versions.itemText(i)) for i in range(2))
    assert page.versions.itemText(0) == "v2 edited"
    assert page.versions.width() > longest
