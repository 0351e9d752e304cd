"""A headless runner as another machine runs it (``san jobs run``), for the lease tests.

    python -m tests.support.lease_worker DATA_DIR LEASE_SECONDS [GIVE_UP_SECONDS]

The library is the one $SAN_DATABASE_URL names; DATA_DIR is the machine. Its only processor (card analysis) says
"running JOB_ID", then waits: for ever when the job's target is ``wait``, until a file named after the target
exists beside DATA_DIR when the target starts with ``gate-`` (so a test decides when those end), a twentieth of a
second when it starts with ``slow-``, not at all otherwise; each job it finishes prints "done JOB_ID".
The run ends when nothing is left (``--until-idle``), or gives up on a server out of reach after GIVE_UP_SECONDS,
printing why on stderr.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobType
from san_desktop.jobs.headless import GIVE_UP_SECONDS, run_headless
from san_desktop.jobs.registry import JobContext, ProcessorRegistry
from tests.support.jobs import fast_settings

_said = threading.Lock()  # one line at a time from the pool's threads


def _say(line: str) -> None:
    with _said:
        print(line, flush=True)


def _processor(folder: Path) -> object:
    def run(context: JobContext) -> None:
        _say(f"running {context.job.id}")
        target = context.job.target_id
        if target == "wait":
            threading.Event().wait()  # never set: the job runs until its process ends
        pause = threading.Event()
        if target.startswith("slow-"):
            pause.wait(0.05)  # a job that takes a while (an AI server's answer)
        while target.startswith("gate-") and not (folder / target).exists():
            pause.wait(0.02)  # works until the test says (it makes the file)
        _say(f"done {context.job.id}")

    return run


def main(argv: list[str]) -> int:
    data_dir, lease = Path(argv[1]), float(argv[2])
    give_up = float(argv[3]) if len(argv) > 3 else GIVE_UP_SECONDS
    backend = start_backend(data_dir, kind="headless", log_to_stderr=True)
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, _processor(data_dir.parent))  # type: ignore[arg-type]
    try:
        outcome = run_headless(
            backend, registry, fast_settings(lease_seconds=lease), until_idle=True, timeout=300, give_up=give_up
        )
        if outcome.reason:
            print(outcome.reason, file=sys.stderr, flush=True)
        return outcome.code
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
