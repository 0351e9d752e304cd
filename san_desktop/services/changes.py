"""What a write changed (Anki's ``OpChanges``): each service's write says what it changed, the facade hands it
on, and the window's change hub announces it to the pages, which refresh exactly that."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Generic, Protocol, TypeVar

from san_desktop.core.enums import JobStatus, JobTarget, JobType, job_types_on
from san_desktop.queue.records import JobEvent, JobRecord

T = TypeVar("T")
# a job of these types changed: the scrap it works on (its row in the Inbox) changed too
SCRAP_JOB_TYPES = job_types_on(JobTarget.SCRAP)
# more scraps than this changed at once (by another process, a delete of many): told as the whole library changed
MANY_CHANGED = 200
_ENDS = (JobStatus.COMPLETED, JobStatus.FAILED)


@dataclass(frozen=True)
class Changes:
    """What a write (or another process) changed; pages refresh exactly that."""

    scraps: frozenset[str] = frozenset()  # scraps added, changed or deleted (their Inbox rows)
    # those of ``scraps`` told only because a job of theirs moved (a page that shows no job need not read them);
    # one also told for itself (deleted, edited, captured) is not among them
    job_scraps: frozenset[str] = frozenset()
    cards_of_scraps: frozenset[str] = frozenset()  # scraps whose card was made or re-made
    jobs: tuple[JobRecord, ...] = ()  # newest state of each changed job
    # the jobs that came to an end (completed or failed, and were not so before), once each time: the news that
    # notifications tell
    finished: tuple[JobRecord, ...] = ()
    tils: frozenset[str] = frozenset()  # days whose TIL text changed (an edit saved)
    quizzes: bool = False  # quizzes answered, edited, suspended or deleted (made ones come as their job)
    stars: bool = False  # a starred repository hidden or shown again (new rankings come as their job)
    settings: bool = False
    ai_settings_changed: bool = False  # the AI server or models: paused AI work may run again
    embedding_model_changed: bool = False
    external: bool = False  # (some of it) made by another process
    # so many scraps came or went at once (an import, its undo) that pages read what they show again,
    # rather than thousands of rows one by one
    library: bool = False

    def __or__(self, other: Changes) -> Changes:
        return Changes.merge((self, other))

    @property
    def new_scrap_jobs(self) -> frozenset[str]:
        """Scraps whose job was just made (PENDING, never tried): an import's or a capture's. The scrap itself
        is told by whoever made it (the capture's own change, another process's notice, an import's end):
        a page need not read a scrap it does not show for this (one whose other jobs moved on, it does)."""
        fresh: set[str] = set()
        moved: set[str] = set()
        for job in self.jobs:
            if job.job_type in SCRAP_JOB_TYPES:
                new = job.status is JobStatus.PENDING and job.attempts == 0
                (fresh if new else moved).add(job.target_id)
        return frozenset(fresh - moved)

    @staticmethod
    def merge(items: Iterable[Changes]) -> Changes:
        """All of ``items`` in one (each job in its newest state), in one pass: merging them two by two
        copied every job gathered so far again: quadratic in the events, and a bulk retry sends thousands."""
        listed = list(items)
        told_for_themselves = frozenset().union(*(item.scraps - item.job_scraps for item in listed))
        return Changes(
            scraps=frozenset().union(*(item.scraps for item in listed)),
            job_scraps=frozenset().union(*(item.job_scraps for item in listed)) - told_for_themselves,
            cards_of_scraps=frozenset().union(*(item.cards_of_scraps for item in listed)),
            jobs=tuple({job.id: job for item in listed for job in item.jobs}.values()),
            finished=tuple(job for item in listed for job in item.finished),
            tils=frozenset().union(*(item.tils for item in listed)),
            settings=any(item.settings for item in listed),
            ai_settings_changed=any(item.ai_settings_changed for item in listed),
            embedding_model_changed=any(item.embedding_model_changed for item in listed),
            external=any(item.external for item in listed),
            quizzes=any(item.quizzes for item in listed),
            stars=any(item.stars for item in listed),
            library=any(item.library for item in listed),
        )

    def __bool__(self) -> bool:
        return bool(
            self.scraps
            or self.cards_of_scraps
            or self.jobs
            or self.settings
            or self.tils
            or self.quizzes
            or self.stars
            or self.library
        )

    @staticmethod
    def of_job(job: JobRecord, *, external: bool = False) -> Changes:
        """A job written: its scrap's row too when it works on one, and the scrap's card once an analysis is done."""
        scraps = frozenset({job.target_id}) if job.job_type in SCRAP_JOB_TYPES else frozenset()
        made = job.job_type is JobType.CARD_ANALYSIS and job.status is JobStatus.COMPLETED
        return Changes(
            scraps=scraps,
            job_scraps=scraps,
            cards_of_scraps=scraps if made else frozenset(),
            jobs=(job,),
            external=external,
        )

    @staticmethod
    def of_event(event: JobEvent) -> Changes:
        """A job's status change as the queue announced it (``of_job``; and ``finished`` when it came to an end)."""
        changes = Changes.of_job(event.job, external=event.external)
        if event.new_status in _ENDS and event.old_status not in _ENDS:
            changes = replace(changes, finished=(event.job,))
        return changes

    @staticmethod
    def of_scraps(scrap_ids: Iterable[str]) -> Changes:
        """Scraps deleted or restored: told one by one when they are a few, as the whole library when many."""
        ids = frozenset(scrap_ids)
        return Changes(library=True) if len(ids) > MANY_CHANGED else Changes(scraps=ids)


@dataclass(frozen=True)
class Changed(Generic[T]):
    """A write's result and what it changed."""

    value: T
    changes: Changes = field(default_factory=Changes)

    @staticmethod
    def of_job(job: JobRecord) -> Changed[JobRecord]:
        """A job asked for (or retried, cancelled) and what that changed (``Changes.of_job``)."""
        return Changed(job, Changes.of_job(job))


class Written(Protocol):
    """A service's write result that says what it changed (Anki's ``OpChangesWithCount``)."""

    @property
    def changes(self) -> Changes: ...


W = TypeVar("W", bound=Written)


def changed(result: W) -> Changed[W]:
    """``result`` with what it says it changed."""
    return Changed(result, result.changes)
