from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    unit: str
    note: str = ""


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


def print_table(rows: list[Row]) -> None:
    name_width = max(len(row.name) for row in rows)
    value_width = max(len(f"{row.value:,.2f}") for row in rows)
    unit_width = max(len(row.unit) for row in rows)
    print(f"{'benchmark':<{name_width}}  {'value':>{value_width}}  {'unit':<{unit_width}}  note")
    print("-" * (name_width + value_width + unit_width + 30))
    for row in rows:
        print(f"{row.name:<{name_width}}  {row.value:>{value_width},.2f}  {row.unit:<{unit_width}}  {row.note}")
    one, five, fifteen = os.getloadavg()  # a loaded machine's figures are not a quiet machine's
    print(f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores")
