from __future__ import annotations

import math
import os
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@dataclass(frozen=True)
class Target:
    """What a figure must be: its value (``on_ratio`` false) or its ratio to the anchor compared with
    ``bound`` by ``op``."""

    op: Literal["<", "<=", ">=", "=="]
    bound: float
    on_ratio: bool = False

    def holds(self, figure: float | None) -> bool | None:
        """Whether ``figure`` meets the target; None when there is no figure to judge (no anchor, nan)."""
        if figure is None or math.isnan(figure):
            return None
        return {
            "<": figure < self.bound,
            "<=": figure <= self.bound,
            ">=": figure >= self.bound,
            "==": figure == self.bound,
        }[self.op]

    def describe(self, unit: str) -> str:
        return f"ratio {self.op} {self.bound:.2f}x" if self.on_ratio else f"{self.op} {_figure(self.bound)} {unit}"


def at_most(bound: float) -> Target:
    return Target("<=", bound)


def below(bound: float) -> Target:
    return Target("<", bound)


def at_least(bound: float) -> Target:
    return Target(">=", bound)


def ratio_at_most(bound: float) -> Target:
    return Target("<=", bound, on_ratio=True)


def ratio_at_least(bound: float) -> Target:
    return Target(">=", bound, on_ratio=True)


@dataclass(frozen=True)
class Row:
    """One figure; ``anchor`` is what it is compared with in the same run (another implementation or the
    work's own floor), named by ``anchor_name``; the table prints value / anchor, and the ``target`` with
    whether it is met."""

    name: str
    value: float
    unit: str
    note: str = ""
    anchor: float | None = None
    anchor_name: str = ""
    target: Target | None = None

    @property
    def ratio(self) -> float | None:
        if self.anchor is None or self.anchor == 0:
            return None
        return self.value / self.anchor

    @property
    def met(self) -> bool | None:
        """Whether the target is met; None without a target or without a figure to judge."""
        if self.target is None:
            return None
        return self.target.holds(self.ratio if self.target.on_ratio else self.value)


def qt_app() -> Any:
    """The one QApplication of a benchmark run. Closing a benchmark's window must not quit it: Qt's quit on
    the last window closed ended the next benchmark's event loop at once (the TIL lag read nan)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([])
    app.setQuitOnLastWindowClosed(False)
    return app


class LagMeter:
    """The GUI event loop's lag: a timer that should fire every ``interval`` ms notes how late it was."""

    def __init__(self, interval: int = 5) -> None:
        from PySide6.QtCore import QElapsedTimer, QTimer

        self.interval = interval
        self.lags: list[float] = []
        self._clock = QElapsedTimer()
        self._ticker = QTimer()
        self._ticker.setInterval(interval)
        self._ticker.timeout.connect(self._on_ticker_timeout)

    def start(self) -> None:
        self._clock.start()
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()

    def _on_ticker_timeout(self) -> None:
        self.lags.append(max(0.0, self._clock.restart() - self.interval))

    def row(self, name: str, note: str) -> Row:
        """The worst lag against the 50 ms a person notices, with the p99 in the note."""
        return Row(
            name,
            max(self.lags) if self.lags else float("nan"),
            "ms",
            f"p99 {percentile(self.lags, 99):.1f} ms; {note}",
            target=below(50),
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values)


@contextmanager
def temporary_data_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="san-bench-") as directory:
        yield Path(directory)


def _figure(value: float) -> str:
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"


def _verdict(row: Row) -> str:
    if row.target is None:
        return "-"
    said = {True: "met", False: "MISSED", None: "not judged"}[row.met]
    return f"{row.target.describe(row.unit)}: {said}"


def table_lines(rows: list[Row]) -> list[str]:
    """benchmark | value unit | anchor (value, name) | ratio | target and whether it is met | note, then
    the targets missed."""
    header = ("benchmark", "value", "anchor in the same run", "ratio", "target", "note")
    cells = [
        (
            row.name,
            f"{_figure(row.value)} {row.unit}",
            f"{_figure(row.anchor)} {row.unit} {row.anchor_name}" if row.anchor is not None else "-",
            f"{row.ratio:.2f}x" if row.ratio is not None else "-",
            _verdict(row),
            row.note,
        )
        for row in rows
    ]
    widths = [max([len(header[i]), *(len(cell[i]) for cell in cells)]) for i in range(5)]
    lines = ["  ".join(f"{title:<{width}}" for title, width in zip(header, [*widths, 0], strict=True)).rstrip()]
    lines.append("-" * (sum(widths) + 10 + 40))
    for cell in cells:
        lines.append(
            f"{cell[0]:<{widths[0]}}  {cell[1]:>{widths[1]}}  {cell[2]:<{widths[2]}}  {cell[3]:>{widths[3]}}  "
            f"{cell[4]:<{widths[4]}}  {cell[5]}".rstrip()
        )
    judged = [row for row in rows if row.met is not None]
    missed = [row.name for row in judged if not row.met]
    lines.append(
        f"targets: {len(judged) - len(missed)} of {len(judged)} met"
        + (f"; missed: {'; '.join(missed)}" if missed else "")
    )
    return lines


def print_table(rows: list[Row]) -> None:
    """The table of ``rows``, then the machine's load average."""
    for line in table_lines(rows):
        print(line)
    one, five, fifteen = os.getloadavg()  # a loaded machine's figures are not a quiet machine's
    print(f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores")


@contextmanager
def open_window(directory: Path) -> Iterator[tuple[Any, Any]]:
    """(facade, main window) on ``directory``, shown, its runner started and its start-up sweep done, as a
    person's window is when they start working; closed afterwards."""
    from PySide6.QtCore import QEventLoop

    from san_desktop.app import open_app
    from san_desktop.ui.common.context import build_context, freeze_startup_objects
    from san_desktop.ui.main_window import MainWindow

    qt = qt_app()
    with open_app(directory, kind="gui", log_to_stderr=False) as app:
        context = build_context(app, ai_in_own_process=True)  # as the app does
        window = MainWindow(context)
        window.show()
        swept = QEventLoop()
        context.runner.sweep_finished.connect(lambda _report: swept.quit())
        context.start()
        swept.exec()
        freeze_startup_objects()
        try:
            yield app, window
        finally:
            window.close()
            qt.processEvents()


def wait_until(condition: Callable[[], bool], limit_ms: int) -> None:
    """Run the event loop until ``condition`` holds (looked at every 20 ms) or ``limit_ms`` passed."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    poll = QTimer()
    poll.timeout.connect(lambda: loop.quit() if condition() else None)
    poll.start(20)
    QTimer.singleShot(limit_ms, loop.quit)
    loop.exec()
    poll.stop()
