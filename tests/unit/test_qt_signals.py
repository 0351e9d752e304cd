"""Guard against a PySide6 regression (seen in 6.12.0): every signal emission dropped one reference to
Python's ``True``, so a busy app crashed after a few thousand signals with "bool_dealloc"."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from pytestqt.qtbot import QtBot


class _Emitter(QObject):
    """Signals: changed(object), finished(str, int)."""

    changed = Signal(object)
    finished = Signal(str, int)


def test_emitting_signals_does_not_eat_references_to_true(qtbot: QtBot) -> None:
    emitter = _Emitter()
    received: list[object] = []
    emitter.changed.connect(received.append)
    emitter.finished.connect(lambda pool, count: received.append((pool, count)))
    before = sys.getrefcount(True)
    for n in range(2000):
        emitter.changed.emit(("job", n))
        emitter.finished.emit("AI", n)
    assert len(received) == 4000
    drift = sys.getrefcount(True) - before
    assert abs(drift) < 100, f"references to True changed by {drift} over 4000 emissions"
