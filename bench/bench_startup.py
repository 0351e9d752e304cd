"""Command line start-up: `san --version` and `san scrap add` wall time (median of runs), beside
`python -c pass` as the floor."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import Row, median, temporary_data_dir


def _wall(args: list[str], env: dict[str, str], runs: int = 7) -> float:
    times = []
    for n in range(runs):
        start = time.perf_counter()
        subprocess.run([*args, *([f"--text=startup bench {n} {time.time()}"] if args[-1] == "add" else [])],
                       env=env, capture_output=True, check=True)  # fmt: skip
        times.append((time.perf_counter() - start) * 1000)
    return median(times)


def run_all() -> list[Row]:
    with temporary_data_dir() as directory:
        env = {**os.environ, "SAN_DATA_DIR": str(directory)}
        san = [sys.executable, "-m", "san_desktop.cli.main"]
        subprocess.run([*san, "scrap", "list"], env=env, capture_output=True, check=True)  # the database exists
        floor = _wall([sys.executable, "-c", "pass"], env)
        version = _wall([*san, "--version"], env)
        add = _wall([*san, "scrap", "add"], env)
    return [
        Row("`san --version` wall time, median", version, "ms", f"target <= 150 ms; python -c pass {floor:.0f} ms"),
        Row("`san scrap add --text ...` wall time, median", add, "ms", "target <= 350 ms"),
    ]
