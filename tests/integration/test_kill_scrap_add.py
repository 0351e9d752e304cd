"""``san scrap add`` killed (SIGKILL) at random points, 100 times: the database stays intact and every scrap
whose id was printed (acknowledged) is there, with both of its jobs."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from san_desktop.core.paths import database_path
from tests.support.db import raw_connection
from tests.support.processes import child_env, run_san

KILLS = 100
AT_ONCE = 4


def _start(n: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "--text", f"kill test scrap number {n}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )


@pytest.mark.slow
def test_killing_scrap_add_at_random_points_loses_nothing_acknowledged(data_dir: Path) -> None:
    rng = random.Random(20261130)
    assert run_san("scrap", "add", "--text", "created before the kills").returncode == 0  # schema in place
    # how long a batch of adds takes side by side, so the kills spread over start-up, the write and exit
    started = time.monotonic()
    for child in [_start(-1 - i) for i in range(AT_ONCE)]:
        child.communicate(timeout=60)
        assert child.returncode == 0
    full_run = time.monotonic() - started

    acknowledged: set[str] = set()
    completed = 0
    for batch in range(KILLS // AT_ONCE):
        children = [_start(batch * AT_ONCE + i) for i in range(AT_ONCE)]
        delays = sorted(rng.uniform(0.4 * full_run, 1.1 * full_run) for _ in children)
        begun = time.monotonic()
        for child, delay in zip(children, delays, strict=True):
            try:  # until its kill moment, unless it ends by itself first
                child.wait(timeout=max(0.0, begun + delay - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
        for child in children:
            out, _err = child.communicate(timeout=60)
            if child.returncode == 0:
                completed += 1
            for line in out.splitlines():
                if line.startswith("scrap "):  # printed only after the commit
                    acknowledged.add(line.split()[1])

    path = database_path(data_dir)
    with raw_connection(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = {row[0] for row in conn.execute("SELECT id FROM scraps")}
        jobs = dict(
            conn.execute(
                "SELECT target_id, count(*) FROM async_jobs WHERE job_type IN ('CARD_ANALYSIS', 'SCRAP_REFINE') "
                "GROUP BY target_id"
            ).fetchall()
        )
    assert acknowledged <= stored
    assert all(jobs.get(scrap_id) == 2 for scrap_id in stored)  # never a scrap without its jobs
    # the kills landed at different points: before the write, and after it (acknowledged or not)
    assert 0 < len(acknowledged) < KILLS, (completed, len(acknowledged))
    assert run_san("scrap", "list").returncode == 0
