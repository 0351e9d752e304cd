"""The window's embedded AI computes in a process of its own (``ai.own_process``; ``make bench``: the
endpoint's burst): a scrap captured while the window runs gets its card from that child, which is started
after the encoder, before the first card, and is gone once the app has quit."""

from __future__ import annotations

import os

from pytestqt.qtbot import QtBot

from san_desktop.ai.own_process import OwnProcessProvider
from san_desktop.app import SanApp
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from tests.support.processes import is_running


def test_cards_are_made_in_the_ai_process_which_ends_with_the_app(
    qtbot: QtBot, app: SanApp, own_process_context: AppContext
) -> None:
    window = MainWindow(own_process_context)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(own_process_context.runner.sweep_finished, timeout=10_000):
        own_process_context.start(poll_ms=100)
    provider = app.providers.get()
    assert isinstance(provider, OwnProcessProvider)
    qtbot.waitUntil(lambda: bool(provider.process_ids()), timeout=60_000)  # warmed up before any card
    (child,) = provider.process_ids()
    assert child != os.getpid()

    captured = app.capture_text("# 체크포인트\n\nA checkpoint copies the write-ahead log back into the database.")
    scrap_id = captured.value.scrap_id
    qtbot.waitUntil(lambda: app.cards.card_id_for_scrap(scrap_id) is not None, timeout=30_000)

    assert provider.process_ids() == [child]  # the same child made it
    assert own_process_context.ai_failure is None
    window.close()
    own_process_context.shutdown()
    app.close()
    assert not is_running(child)
