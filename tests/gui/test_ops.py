"""Background operations of the window: nothing starts once the window shut them down, and one that finishes
after its receiver is gone raises nothing."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import pytest
import shiboken6
from PySide6.QtCore import QCoreApplication
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


def test_held_operations_wait_for_release_and_then_run(qtbot: QtBot, context: AppContext) -> None:
    """The entry point holds the pages' first reads until the window's first frame is painted."""
    ran: list[str] = []
    answered: list[str] = []

    def reader(name: str) -> Callable[[], str]:
        def read() -> str:
            ran.append(name)
            return name

        return read

    context.ops.hold()
    for name in ("inbox", "jobs", "til"):
        context.ops.run(reader(name), answered.append)
    assert context.ops.pool.waitForDone(5_000)  # at once: the pool was given nothing
    assert ran == []
    assert context.ops.busy  # asked for, not forgotten
    context.ops.release()
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=5_000)
    assert sorted(ran) == ["inbox", "jobs", "til"]
    assert sorted(answered) == ["inbox", "jobs", "til"]


def test_operations_held_at_shutdown_never_run(qtbot: QtBot, context: AppContext) -> None:
    ran: list[str] = []
    context.ops.hold()
    context.ops.run(lambda: ran.append("read"))
    assert context.ops.shutdown()
    assert not context.ops.busy
    context.ops.release()  # a first frame after quitting starts nothing
    assert context.ops.pool.waitForDone(5_000)
    assert ran == []


@pytest.mark.parametrize("fails", [False, True], ids=["succeeds", "fails"])
def test_an_operation_that_finishes_after_its_receiver_is_gone_raises_and_shows_nothing(
    qtbot: QtBot, context: AppContext, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    """Issue 38: a worker that reported after its signals' object was deleted (the window closed while it ran)
    raised "Signal source has been deleted" on its thread, which reached the crash dialog."""
    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "excepthook", lambda _kind, exc, _tb: reported.append(exc))  # the crash dialog
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args.exc_value))
    started, release = threading.Event(), threading.Event()
    answered: list[object] = []

    def slow_read() -> str:
        started.set()
        release.wait(10)
        if fails:
            raise RuntimeError("the read tripped")
        return "read"

    context.ops.run(slow_read, answered.append, answered.append)
    assert started.wait(5)
    (signals,) = context.ops._running  # the operation's signals: what its result would be delivered through
    shiboken6.delete(signals)  # deleted while it runs, as the closing app deletes what it still holds
    context.ops._running.clear()
    release.set()
    assert context.ops.pool.waitForDone(5_000)
    QCoreApplication.processEvents()  # deliver anything that would have come back
    assert reported == []
    assert answered == []
