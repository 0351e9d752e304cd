"""Background operations for the window (after Anki's ``QueryOp``/``CollectionOp`` and superqt's
workers): one call runs a facade call on a pool thread and delivers its result on the GUI thread.

    ops.run(lambda: app.cards.get(card_id), on_success=self._show_card, on_failure=self._say)
    ops.write(lambda: app.delete_scrap(scrap_id), on_success=..., initiator=self)
    self._day_reads = LatestOnly(ops)  # then: self._day_reads.run(lambda: app.til.get(day), self._show)

``write`` expects the call to return ``Changes`` or ``Changed``; what changed is announced on the hub
before ``on_success`` runs. Expected failures (``SanError``) go to ``on_failure`` (or the status bar), and so
does the library's server out of reach (the hub says that once for the outage when nobody else takes it);
anything else is a bug and reaches the crash dialog.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Collection
from typing import Any

from PySide6.QtCore import QObject, QThreadPool

from san_desktop.app import Changed, Changes
from san_desktop.core.errors import DatabaseUnreachableError, SanError
from san_desktop.jobs.workers import Worker, WorkerSignals
from san_desktop.ui.common.hub import ChangeHub

log = logging.getLogger(__name__)


class _Op(Worker[Any]):
    """A facade call; what it returns comes by ``returned``, what it raises by ``errored`` (a result that arrives
    after its signals' object is gone, the window closed meanwhile, goes nowhere: raised on the pool's thread, it
    would reach the crash handler from there)."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__()
        self.call = call

    def work(self) -> Any:
        return self.call()


class Ops(QObject):
    """Runs facade calls off the GUI thread. No signals of its own; keeps every running operation
    alive until it reported, and waits for them at shutdown."""

    def __init__(
        self,
        hub: ChangeHub,
        parent: QObject | None = None,
        *,
        unreachable: Callable[[BaseException], DatabaseUnreachableError | None] | None = None,
    ) -> None:
        """``unreachable``: the library's server out of reach that an error is, in words (``SanApp.unreachable``):
        an expected failure, not a bug."""
        super().__init__(parent)
        self.hub = hub
        self._unreachable = unreachable
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self.pool.setObjectName("ui-ops")
        self._running: set[WorkerSignals] = set()
        self._held: list[_Op] | None = None  # while held: operations waiting for release(), in order
        self._stopped = False

    def run(
        self,
        call: Callable[[], Any],
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[SanError], None] | None = None,
        *,
        on_bug: Callable[[BaseException], None] | None = None,
        on_finished: Callable[[], None] | None = None,
    ) -> None:
        """``on_bug`` takes any other exception instead of the crash dialog (a connection test, where
        whatever a server does is an answer to show). ``on_finished`` runs first whatever happened (a
        caller's "busy" flag is reset even when the call hit a bug). After ``shutdown`` nothing starts: the
        database is closed, and a late page refresh would open a new connection to it (or, once its folder
        is gone, make an empty database there)."""
        if self._stopped:
            log.debug("Not started after shutdown: %s", call)
            return
        op = _Op(call)
        signals = op.signals
        self._running.add(signals)

        def succeeded(result: Any) -> None:
            self._running.discard(signals)
            if on_finished is not None:
                on_finished()
            if on_success is not None:
                on_success(result)

        def failed(exc: BaseException) -> None:
            self._running.discard(signals)
            if on_finished is not None:
                on_finished()
            away = self._unreachable(exc) if self._unreachable is not None else None
            if away is not None:
                exc = away
            if isinstance(exc, SanError):
                if away is None:
                    log.info("%s", exc)  # (a server away is logged once for the whole outage)
                if on_failure is not None:
                    on_failure(exc)
                elif away is not None:
                    self.hub.server_away(away)  # said once, not for every read that meets it
                else:
                    self.hub.message.emit(str(exc))  # the status bar says it
                return
            if on_bug is not None:
                on_bug(exc)
                return
            sys.excepthook(type(exc), exc, exc.__traceback__)

        signals.returned.connect(succeeded)
        signals.errored.connect(failed)
        if self._held is not None:
            self._held.append(op)
        else:
            self.pool.start(op)

    def hold(self) -> None:
        """Queue operations instead of starting them, until ``release``: the entry point holds the pages'
        first reads until the window's first frame is painted (their answers arrive after it anyway; run
        during it, they took the GUI thread's turns with the GIL)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Start what was held, in the order it was asked for, and run operations at once from now on."""
        held, self._held = self._held or [], None
        for op in held:
            self.pool.start(op)

    def write(
        self,
        call: Callable[[], Changes | Changed[Any]],
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[SanError], None] | None = None,
        *,
        initiator: object | None = None,
    ) -> None:
        """Like ``run`` for a write: its ``Changes`` are announced, then ``on_success`` gets its value."""

        def done(result: Changes | Changed[Any]) -> None:
            changes = result.changes if isinstance(result, Changed) else result
            self.hub.tell(changes, initiator)
            if on_success is not None:
                on_success(result.value if isinstance(result, Changed) else result)

        self.run(call, done, on_failure)

    @property
    def busy(self) -> bool:
        return bool(self._running)

    def shutdown(self, wait_ms: int = 10_000) -> bool:
        self._stopped = True
        for op in self._held or []:  # never started: the database is closing
            self._running.discard(op.signals)
        self._held = None
        return self.pool.waitForDone(wait_ms)


class LatestOnly:
    """One stream of reads whose answers replace each other (the day a page shows, a window's plan): each
    ``run`` supersedes the earlier ones, and an earlier one that answers later is dropped. Two threads run
    operations, so a read started first can answer last; shown, its older state would stay on screen."""

    def __init__(self, ops: Ops) -> None:
        self._ops = ops
        self._newest = 0
        self._answered = 0  # the newest read whose answer came

    def run(
        self,
        call: Callable[[], Any],
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[SanError], None] | None = None,
    ) -> None:
        self._newest += 1
        number = self._newest

        def succeeded(result: Any) -> None:
            if number != self._newest:
                return
            self._answered = number
            if on_success is not None:
                on_success(result)

        def failed(exc: SanError) -> None:
            if number != self._newest:
                return
            self._answered = number
            if on_failure is not None:
                on_failure(exc)
            else:
                self._ops.hub.message.emit(str(exc))

        self._ops.run(call, succeeded, failed)

    @property
    def pending(self) -> bool:
        """A read was asked for and its answer has not come yet (nor been dropped)."""
        return self._answered < self._newest

    def drop(self) -> None:
        """Drop the answers on their way (what they would show is no longer wanted)."""
        self._newest += 1
        self._answered = self._newest


class NewestPerItem:
    """Reads of a page's items (its rows) that may overlap: each item takes its answer from the newest read that
    asked for it. Two threads run operations, so a read started before a change can answer after the read the
    change asked for; applied, it would put back what the change took away (a deleted scrap's card)."""

    def __init__(self, ops: Ops) -> None:
        self._ops = ops
        self._count = 0
        self._newest: dict[str, int] = {}  # item -> the number of the newest read that asked for it

    def run(
        self, items: Collection[str], call: Callable[[], Any], on_success: Callable[[Any, list[str]], None]
    ) -> None:
        """Run ``call``; ``on_success`` gets its result and those of ``items`` this read is still the newest of
        (not called when none is)."""
        self._count += 1
        number = self._count
        for item in items:
            self._newest[item] = number
        current: list[str] = []

        def finished() -> None:  # (whatever happened: the items' marks go with their newest read)
            current.extend(item for item in items if self._newest.get(item) == number)
            for item in current:
                del self._newest[item]

        def succeeded(result: Any) -> None:
            if current:
                on_success(result, current)

        self._ops.run(call, succeeded, on_finished=finished)

    @property
    def pending(self) -> bool:
        return bool(self._newest)
