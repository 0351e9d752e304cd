"""The processor registry: a deferred one is built once, on first use, by whichever thread asks first."""

from __future__ import annotations

import pytest

from san_desktop.core.enums import JobPool, JobType
from san_desktop.jobs.registry import JobContext, ProcessorRegistry


def _refine(_context: JobContext) -> None:
    return None


def _analyse(_context: JobContext) -> None:
    return None


def _hook(*_args: object) -> int:
    return 0


def _built() -> ProcessorRegistry:
    registry = ProcessorRegistry()
    registry.register(JobType.SCRAP_REFINE, _refine)
    registry.register(JobType.CARD_ANALYSIS, _refine)
    registry.sweep_hooks.append(_hook)
    return registry


def test_a_deferred_registry_is_built_on_first_use_and_once() -> None:
    builds: list[int] = []

    def build() -> ProcessorRegistry:
        builds.append(1)
        return _built()

    registry = ProcessorRegistry.deferred(build)
    assert builds == []
    assert registry.job_types_of(JobPool.AI) == {JobType.SCRAP_REFINE, JobType.CARD_ANALYSIS}
    assert registry.sweep_hooks == [_hook]
    assert registry.get(JobType.SCRAP_REFINE) is _refine
    assert builds == [1]


def test_what_is_registered_on_a_deferred_registry_wins_over_what_it_builds() -> None:
    registry = ProcessorRegistry.deferred(_built)
    registry.register(JobType.CARD_ANALYSIS, _analyse)  # a test's own processor
    assert registry.get(JobType.CARD_ANALYSIS) is _analyse
    assert registry.get(JobType.SCRAP_REFINE) is _refine


def test_a_build_that_failed_is_tried_again_on_the_next_use() -> None:
    attempts: list[int] = []

    def build() -> ProcessorRegistry:
        attempts.append(1)
        if len(attempts) == 1:
            raise ImportError("a module could not load")
        return _built()

    registry = ProcessorRegistry.deferred(build)
    with pytest.raises(ImportError):
        registry.job_types()
    assert registry.job_types() == {JobType.SCRAP_REFINE, JobType.CARD_ANALYSIS}
