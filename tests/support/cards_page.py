"""The Cards page in tests: it reads its pages of cards off the GUI thread, so a test waits for the first."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from san_desktop.ui.cards.page import CardsPage


def first_read(qtbot: QtBot, page: CardsPage) -> CardsPage:
    """``page`` once its first page of cards has arrived."""
    qtbot.waitUntil(lambda: not page.model.loading, timeout=10_000)
    return page
