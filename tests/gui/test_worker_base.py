"""The one worker base of the runner's threads and the window's operations (``jobs.workers.Worker``): a worker
reports exactly once, on the thread that made it, whatever its work did."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThreadPool
from pytestqt.qtbot import QtBot

from san_desktop.jobs.workers import Worker


class _Answers(Worker[str]):
    def __init__(self, answer: str | None, *, taken: bool = False) -> None:
        super().__init__()
        self.answer = answer
        self.taken = taken  # ``failed`` makes a report of the exception
        self.worked_on: threading.Thread | None = None

    def work(self) -> str:
        self.worked_on = threading.current_thread()
        if self.answer is None:
            raise LookupError("nothing to answer")
        return self.answer

    def failed(self, exc: BaseException) -> str:
        if not self.taken:
            return super().failed(exc)
        return f"failed: {exc}"


def _run(qtbot: QtBot, worker: _Answers) -> tuple[list[object], list[object], list[threading.Thread]]:
    returned: list[object] = []
    errored: list[object] = []
    received_on: list[threading.Thread] = []

    def on_returned(value: object) -> None:
        received_on.append(threading.current_thread())
        returned.append(value)

    def on_errored(exc: object) -> None:
        received_on.append(threading.current_thread())
        errored.append(exc)

    worker.signals.returned.connect(on_returned)
    worker.signals.errored.connect(on_errored)
    pool = QThreadPool()
    pool.start(worker)
    qtbot.waitUntil(lambda: bool(returned or errored), timeout=5_000)
    assert pool.waitForDone(5_000)
    return returned, errored, received_on


def test_what_the_work_returned_is_reported_on_the_thread_that_made_the_worker(qtbot: QtBot) -> None:
    worker = _Answers("done")
    returned, errored, received_on = _run(qtbot, worker)
    assert (returned, errored) == (["done"], [])
    assert worker.worked_on is not threading.main_thread()
    assert received_on == [threading.main_thread()]


def test_an_exception_is_reported_by_errored_unless_failed_takes_it(qtbot: QtBot) -> None:
    returned, errored, _ = _run(qtbot, _Answers(None))
    assert returned == []
    assert [type(exc) for exc in errored] == [LookupError]

    returned, errored, received_on = _run(qtbot, _Answers(None, taken=True))
    assert (returned, errored) == (["failed: nothing to answer"], [])
    assert received_on == [threading.main_thread()]
