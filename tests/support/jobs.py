"""Job settings and processors for tests (registered for the existing job types)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from san_desktop.core.settings import JobSettings
from san_desktop.jobs.registry import JobContext


def fast_settings(**changes: object) -> JobSettings:
    """Defaults scaled down so retries and cooldowns happen within a test."""
    values: dict[str, object] = {
        "poll_interval_seconds": 0.05,
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "breaker_cooldown_seconds": 0.3,
        "breaker_max_cooldown_seconds": 0.6,
        "breaker_failure_threshold": 3,
    }
    values.update(changes)
    return JobSettings(**values)  # type: ignore[arg-type]


@dataclass
class RecordingProcessor:
    """Runs ``behaviour`` (default: succeed) and records which job ran on which thread."""

    behaviour: Callable[[JobContext], None] | None = None
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (job id, attempt, thread name)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, context: JobContext) -> None:
        with self.lock:
            self.calls.append((context.job.id, context.claim.attempt, threading.current_thread().name))
        if self.behaviour is not None:
            self.behaviour(context)

    def count(self) -> int:
        with self.lock:
            return len(self.calls)

    def threads(self) -> set[str]:
        with self.lock:
            return {thread for _job, _attempt, thread in self.calls}
