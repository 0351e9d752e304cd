"""A headless runner whose only job never ends, for the ``--timeout`` tests.

    python -m tests.support.stuck_worker DATA_DIR MODE TIMEOUT

MODE ``python``: the job spins in Python for ever (the interpreter still lets other threads run between
bytecodes). MODE ``regex``: the job runs a catastrophically backtracking pattern, inside which the
interpreter lets no other thread run at all. Prints "stuck JOB_ID" once the job is stuck.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobType
from san_desktop.jobs.headless import run_headless
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from tests.support.jobs import fast_settings


def _spin(context: JobContext) -> None:
    print(f"stuck {context.job.id}", flush=True)
    count = 0
    while count >= 0:
        count += 1


def _backtrack(context: JobContext) -> None:
    print(f"stuck {context.job.id}", flush=True)
    re.match(r"(?:a+)+$", "a" * 60 + "b")  # 2**60 ways to fail: it never returns


def main(argv: list[str]) -> int:
    data_dir, mode, timeout = Path(argv[1]), argv[2], float(argv[3])
    backend = start_backend(data_dir, kind="headless", log_to_stderr=True)
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, _spin if mode == "python" else _backtrack)
    try:
        return run_headless(backend, registry, fast_settings(), timeout=timeout).code
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
