"""Every job type is declared whole: the pool that runs it and what its target is (whoever shows or labels a
job's change reads it there)."""

from __future__ import annotations

from san_desktop.core.enums import JOB_POOLS, JOB_TARGETS, JobTarget, JobType, job_types_on
from san_desktop.services.changes import SCRAP_JOB_TYPES
from san_desktop.services.job_labels import LABELLED_JOB_TYPES


def test_every_job_type_has_a_pool_and_a_target() -> None:
    assert set(JOB_POOLS) == set(JobType)
    assert set(JOB_TARGETS) == set(JobType)


def test_the_jobs_on_a_scrap_are_the_ones_whose_changes_refresh_its_row() -> None:
    assert {JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE, JobType.PAGE_FETCH} == SCRAP_JOB_TYPES
    assert job_types_on(JobTarget.SCRAP) == SCRAP_JOB_TYPES
    assert set(JobType) == LABELLED_JOB_TYPES
    assert job_types_on(JobTarget.DAY) == {JobType.TIL_GENERATION, JobType.TIL_INDEXING}
