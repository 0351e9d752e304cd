"""The benchmark table's targets (met, missed, not judged) and the names `python -m bench` takes."""

from __future__ import annotations

import pytest

from bench.__main__ import GROUPS, SELECTIONS, UnknownBenchmarkError, expand
from bench.common import Row, Target, at_least, at_most, below, ratio_at_least, ratio_at_most, table_lines


@pytest.mark.parametrize(
    ("row", "met"),
    [
        (Row("drain", 8, "s", anchor=10, target=ratio_at_most(0.8)), True),
        (Row("drain", 8.5, "s", anchor=10, target=ratio_at_most(0.8)), False),
        (Row("cards", 90, "cards/s", anchor=100, target=ratio_at_least(0.9)), True),
        (Row("cards", 85, "cards/s", anchor=100, target=ratio_at_least(0.9)), False),
        (Row("lag", 49.9, "ms", target=below(50)), True),
        (Row("lag", 50, "ms", target=below(50)), False),
        (Row("add", 350, "ms", anchor=20, target=at_most(350)), True),
        (Row("add", 351, "ms", anchor=20, target=at_most(350)), False),
        (Row("accuracy", 90, "%", target=at_least(90)), True),
        (Row("notify", 0, "per job", target=Target("==", 0)), True),
        (Row("notify", 0.01, "per job", target=Target("==", 0)), False),
    ],
)
def test_a_target_is_met_by_the_value_or_by_its_ratio_to_the_anchor(row: Row, met: bool) -> None:
    assert row.met is met


def test_a_figure_that_cannot_be_judged_is_neither_met_nor_missed() -> None:
    assert Row("lag", float("nan"), "ms", target=below(50)).met is None
    assert Row("drain", 8, "s", target=ratio_at_most(0.8)).met is None  # no anchor, no ratio
    assert Row("drain", 8, "s", anchor=0, target=ratio_at_most(0.8)).met is None
    assert Row("rate", 8, "jobs/s").met is None  # no target


def test_the_table_prints_each_target_and_names_the_missed_ones() -> None:
    lines = table_lines(
        [
            Row("drain on SQLite", 7, "s", anchor=10, anchor_name="huey", target=ratio_at_most(0.8)),
            Row("worst lag", 61, "ms", "p99 4 ms", target=below(50)),
            Row("enqueue rate", 900, "jobs/s"),
        ]
    )
    drain, lag, rate = lines[2:5]
    assert "0.70x" in drain
    assert "ratio <= 0.80x: met" in drain
    assert "< 50.00 ms: MISSED" in lag
    assert lag.endswith("p99 4 ms")
    assert "met" not in rate
    assert lines[-1] == "targets: 1 of 2 met; missed: worst lag"


def test_an_empty_table_still_prints() -> None:
    assert table_lines([])[-1] == "targets: 0 of 0 met"


def test_no_name_runs_every_group() -> None:
    assert expand([]) == [f"{group}:run_all" for group in GROUPS]


def test_a_selection_and_a_function_expand_in_order_each_once() -> None:
    entries = expand(["seam", "jobs:bench_gui_lag", "startup"])
    assert entries == [*SELECTIONS["seam"], "startup:run_all"]
    assert expand(["postgres:bench_notifications"]) == ["postgres:bench_notifications"]


@pytest.mark.parametrize("name", ["nope", "jobs:", "nope:run_all", ""])
def test_an_unknown_name_is_refused_with_the_names_there_are(name: str) -> None:
    with pytest.raises(UnknownBenchmarkError, match="name a group"):
        expand([name])
