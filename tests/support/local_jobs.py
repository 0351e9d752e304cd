"""Running the product's processors with the embedded provider, without Qt (for service tests)."""

from __future__ import annotations

from san_desktop.ai.factory import ProviderSource
from san_desktop.core.enums import JOB_POOLS, JobPool
from san_desktop.core.settings import AISettings
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.queue.store import JobStore
from san_desktop.services.root import Services


def run_all_jobs(queue: JobStore, session_id: str, providers: ProviderSource | None = None) -> int:
    """Run every runnable job to the end (on this thread); returns how many ran."""
    registry = build_registry(Services.of_store(queue), providers or ProviderSource(AISettings()))
    executor = JobExecutor(queue, registry, session_id, breakers={})
    total = 0
    for pool in set(JOB_POOLS.values()) | {JobPool.AI}:
        total += executor.drain(pool)
    return total
