"""The window on a library whose PostgreSQL server restarts: the outage is said once (the status bar and one log
line each way), never as a crash; the window looks for other programs' changes less often while the server is
away, and hears of them again once it is back."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.app import Changes, SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from tests.support.postgres import PostgresServer, start_temporary, stop_temporary

pytestmark = [pytest.mark.slow, pytest.mark.postgresql]

Poll = tuple[float, Changes | None]  # when a poll started, and what it found (None: it failed)
OUTAGE_SECONDS = 4.0  # how long the server stays away


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own: it is stopped and started again."""
    server = start_temporary()
    yield server
    stop_temporary(server)


@pytest.fixture
def data_dir(own_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The window's library on ``own_server``."""
    monkeypatch.setenv(DATABASE_URL_ENV, own_server.create_database(template=own_server.migrated_template()))
    return tmp_path / "san-data"


@pytest.fixture
def polls(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> list[Poll]:
    """Every look of the window for other programs' changes, as it is made."""
    made: list[Poll] = []
    poll_external = app.poll_external

    def poll() -> Changes:
        started = time.monotonic()
        try:
            found = poll_external()
        except Exception:
            made.append((started, None))
            raise
        made.append((started, found))
        return found

    monkeypatch.setattr(app, "poll_external", poll)
    return made


def test_the_window_waits_out_a_server_restart_and_hears_of_changes_again(
    qtbot: QtBot,
    window: MainWindow,
    live_context: AppContext,
    app: SanApp,
    own_server: PostgresServer,
    polls: list[Poll],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    bugs: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _kind, exc, _tb: bugs.append(exc))  # the crash dialog
    said: list[str] = []
    live_context.hub.message.connect(said.append)

    own_server.stop("fast")
    try:
        qtbot.waitUntil(lambda: live_context.runner.outage.seconds_down() >= OUTAGE_SECONDS, timeout=30_000)
        read: list[int] = []
        live_context.ops.run(app.scraps.count_scraps, read.append)  # a page's read meets it: said already
        qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=20_000)
    finally:
        failed = [started for started, found in polls if found is None]
        own_server.start()  # (also when the test fails: the window's close reads the library)
    # the server tried less and less often (after 0.5, 1 and 2 s, by the window's poll or its jobs, whichever came
    # first), where the window's poll timer fires every POLL_MS
    assert len(failed) <= 8, [round(at - failed[0], 2) for at in failed]
    assert read == []
    assert [text for text in said if "cannot be reached" in text] == [
        "The database server cannot be reached; SAN Desktop keeps trying, and shows changes again once it answers."
    ]

    other = SanApp(start_backend(app.data_dir, kind="cli", lock=False, log_to_stderr=False))  # `san scrap add`
    try:
        scrap_id = other.capture_text("Written by another program once the server was back.").value.scrap_id
    finally:
        other.close()
    qtbot.waitUntil(lambda: any(found is not None and scrap_id in found.scraps for _, found in polls), timeout=30_000)
    qtbot.waitUntil(lambda: "answers again" in caplog.text, timeout=10_000)
    assert "The database server answers again; changes made elsewhere show once more." in said

    assert bugs == []
    logged = [record.getMessage() for record in caplog.records]
    assert len([line for line in logged if "cannot be reached" in line]) == 1, logged
    assert len([line for line in logged if "answers again" in line]) == 1, logged
    # no traceback of SAN's (SQLAlchemy's pool may log one of its own: a connection given back just as the server
    # shut down, whose rollback the server refused)
    assert not [record for record in caplog.records if record.exc_info and record.name.startswith("san_desktop")]


def test_quitting_while_the_server_is_away_closes_the_window_and_the_app(
    qtbot: QtBot,
    window: MainWindow,
    live_context: AppContext,
    app: SanApp,
    own_server: PostgresServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Closing reads the library's shared settings before it saves the window's size and place: with the server
    away that failed, and the rest of the close (the app's own) was skipped."""
    caplog.set_level(logging.WARNING)
    own_server.stop("fast")
    try:
        with qtbot.waitSignal(window.shut_down, timeout=30_000):
            window.close()
    finally:
        own_server.start()
    assert "The window's size and place were not saved: " in caplog.text
    assert "cannot be reached" in caplog.text
    assert not [record for record in caplog.records if record.exc_info and record.name.startswith("san_desktop")]
