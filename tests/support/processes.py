"""Running the app's entry points in child processes with the test's isolated environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


def run_python(
    args: Sequence[str],
    *,
    python: str = sys.executable,
    cwd: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env if env is not None else child_env(),
        check=False,
    )


def run_san(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_python(["-m", "san_desktop.cli.main", *args], timeout=timeout)


def marker_appears(marker: Path, child: subprocess.Popen[bytes], seconds: float = 120) -> bool:
    """Wait (on the child, not by sleeping) until a fail point's marker file appears; False if the child
    ended first or ``seconds`` passed."""
    for _ in range(int(seconds * 10)):
        if marker.exists():
            return True
        try:
            child.wait(0.1)  # returns early only if the child died, which is a failure
        except subprocess.TimeoutExpired:
            continue
        return False
    return False


def is_running(pid: int) -> bool:
    """Whether a process with ``pid`` exists (one that ended and was reaped does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
