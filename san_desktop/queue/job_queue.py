"""The job store's name before issue 39 (``queue.store.JobStore``), kept while ``app.py``, ``jobs/processors.py``
and ``bench/`` (other parts of that issue) still import it by this one."""

from __future__ import annotations

from san_desktop.queue.store import SWEEP_HOOK_BATCH, JobStore

JobQueue = JobStore

__all__ = ["SWEEP_HOOK_BATCH", "JobQueue"]
