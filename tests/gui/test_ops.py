"""Background operations of the window: nothing starts once the window shut them down."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

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
