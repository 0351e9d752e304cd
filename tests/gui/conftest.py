"""Fixtures of the Qt tests."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow

POLL_MS = 100  # other processes' changes are looked for this often in these tests


@pytest.fixture
def window(qtbot: QtBot, live_context: AppContext) -> MainWindow:
    """The main window on the product's processors, shown, with the runner started."""
    main = MainWindow(live_context)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitExposed(main)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=POLL_MS)
    return main
