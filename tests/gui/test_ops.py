"""Background operations of the window: nothing starts once the window shut them down."""

from __future__ import annotations

import sys

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.app import Changes, SanApp
from san_desktop.ui.common.context import AppContext


def test_nothing_starts_after_shutdown(qtbot: QtBot, context: AppContext) -> None:
    calls: list[str] = []
    results: list[object] = []

    def call(name: str) -> str:
        calls.append(name)
        return "done"

    context.ops.run(lambda: call("before"), results.append)
    qtbot.waitUntil(lambda: results == ["done"], timeout=5_000)
    context.ops.shutdown()
    context.ops.run(lambda: call("after"), results.append)  # a page refreshing as the window closes
    context.ops.pool.waitForDone(5_000)
    qtbot.wait(0)  # deliver anything that would have come back
    assert calls == ["before"]
    assert results == ["done"]
    assert not context.ops.busy


def test_polling_goes_on_after_a_poll_hits_a_bug(
    qtbot: QtBot, context: AppContext, app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 24: a poll that raised anything but SanError left the hub "polling" for good, and changes
    made by other programs were never seen again. A bug is reported once; polls go on."""
    calls: list[int] = []
    reported: list[type[BaseException]] = []

    def poll() -> Changes:
        calls.append(len(calls))
        if len(calls) <= 2:
            raise RuntimeError("the poll tripped over something")
        return Changes()

    monkeypatch.setattr(app, "poll_external", poll)
    monkeypatch.setattr(sys, "excepthook", lambda kind, _exc, _tb: reported.append(kind))  # the crash dialog
    context.hub.watch(app, context.ops, poll_ms=60_000)  # polled by hand below

    def polls_again(count: int) -> bool:
        context.hub.poll_now()  # refused while a poll is under way
        return len(calls) >= count

    qtbot.waitUntil(lambda: polls_again(1), timeout=5_000)
    qtbot.waitUntil(lambda: polls_again(3), timeout=5_000)
    assert reported == [RuntimeError]  # once, not a dialog per poll
