"""A human label for each job's target (the Jobs page's Target column): a scrap's card title (or the start of its
text), a day's TIL, a commit's day and repository, a day's quizzes, the GitHub stars."""

from __future__ import annotations

from collections.abc import Iterable

from san_desktop.core.enums import JOB_TARGETS, JobTarget
from san_desktop.queue.records import JobRecord
from san_desktop.services.root import Services

# jobs whose target has a name a person knows: all of them
LABELLED_JOB_TYPES = frozenset(JOB_TARGETS)


def job_labels(services: Services, jobs: Iterable[JobRecord]) -> dict[str, str]:
    """The label of each target of ``jobs``, by target id."""
    targets: dict[JobTarget, set[str]] = {}
    for job in jobs:
        targets.setdefault(JOB_TARGETS[job.job_type], set()).add(job.target_id)
    labels: dict[str, str] = {}
    if scraps := targets.get(JobTarget.SCRAP):
        labels.update(services.scraps.labels(sorted(scraps)))
    if summaries := targets.get(JobTarget.DAY):
        labels.update(services.til.labels(sorted(summaries)))
    if commits := targets.get(JobTarget.COMMIT):
        labels.update(services.commits.labels(sorted(commits)))
    if generations := targets.get(JobTarget.QUIZ_GENERATION):
        labels.update(services.quizzes.labels(sorted(generations)))
    labels.update((account, "Your GitHub stars") for account in targets.get(JobTarget.ACCOUNT, ()))
    return labels
