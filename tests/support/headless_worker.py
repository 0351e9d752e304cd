"""A headless runner process with an idempotent test processor, for the crash-safety test.

    python -m tests.support.headless_worker DATA_DIR OUTPUT_FILE

The processor appends "job_id run_id" to OUTPUT_FILE unless the job id is already there (idempotent:
a re-run after a crash adds nothing), then prints "done job_id" so the test can follow progress
without sleeping. Both the AI and the GitHub pool get work.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobType
from san_desktop.core.settings import JobSettings
from san_desktop.jobs.headless import run_headless
from san_desktop.jobs.registry import JobContext, ProcessorRegistry

_file_lock = threading.Lock()


def make_processor(output: Path) -> object:
    def append_job_id(context: JobContext) -> None:
        # a little work outside the lock, so that a kill often lands while jobs are running
        sum(i * i for i in range(20_000))
        with _file_lock:
            seen = output.read_text(encoding="utf-8") if output.exists() else ""
            if context.job.id not in seen:
                with output.open("a", encoding="utf-8") as handle:
                    handle.write(f"{context.job.id} {context.run_id}\n")
                    handle.flush()
                    os.fsync(handle.fileno())
        print(f"done {context.job.id}", flush=True)

    return append_job_id


def main(argv: list[str]) -> int:
    data_dir, output = Path(argv[1]), Path(argv[2])
    backend = start_backend(data_dir, kind="headless", log_to_stderr=False)
    processor = make_processor(output)
    registry = ProcessorRegistry()
    registry.register(JobType.CARD_ANALYSIS, processor)  # type: ignore[arg-type]
    registry.register(JobType.TIL_GITHUB_COMMIT, processor)  # type: ignore[arg-type]
    settings = JobSettings(poll_interval_seconds=0.05)
    try:
        return run_headless(backend, registry, settings, until_idle=True, timeout=120).code
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
