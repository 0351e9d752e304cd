"""Guard against a PySide6 regression (seen in 6.12.0): every signal emission dropped one reference to
Python's ``True``, so a busy app crashed after a few thousand signals with "bool_dealloc".

The references are counted in a fresh interpreter with the garbage collector paused, so nothing the
rest of the suite left behind (threads, Qt objects, garbage being collected) can move the count.
On Python 3.12 and later ``True`` is immortal and its count never moves; the regression was harmless there.
"""

from __future__ import annotations

import json

from tests.support.processes import run_python

EMIT = """
import gc, json, sys
from PySide6.QtCore import QObject, Signal

class Emitter(QObject):
    changed = Signal(object)
    finished = Signal(str, int)

emitter = Emitter()
received = []
emitter.changed.connect(received.append)
emitter.finished.connect(lambda pool, count: received.append((pool, count)))
gc.collect()
gc.disable()
before = sys.getrefcount(True)
for n in range(2000):
    emitter.changed.emit(("job", n))
    emitter.finished.emit("AI", n)
drift = sys.getrefcount(True) - before
gc.enable()
print(json.dumps({"received": len(received), "drift": drift}))
"""


def test_emitting_signals_does_not_eat_references_to_true() -> None:
    result = run_python(["-c", EMIT], timeout=60)
    # 6.12.0 kills the interpreter outright ("Fatal Python error: bool_dealloc") before the loop ends
    assert result.returncode == 0, f"the emitting interpreter died (exit {result.returncode}): {result.stderr[-2000:]}"
    report = json.loads(result.stdout)
    assert report["received"] == 4000
    # a healthy PySide6 moves the count by a handful at most; 6.12.0 loses one per emission
    assert abs(report["drift"]) < 100, f"references to True changed by {report['drift']} over 4000 emissions"
