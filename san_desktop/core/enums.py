"""Enumerations stored as strings in the database.

Each enum's values must equal the CHECK constraint of its column in the migrated database; the drift
guard test in tests/integration/db enforces it, so adding a value here needs a migration too.
"""

from __future__ import annotations

from enum import StrEnum


class JobType(StrEnum):
    CARD_ANALYSIS = "CARD_ANALYSIS"
    SCRAP_REFINE = "SCRAP_REFINE"
    TIL_GENERATION = "TIL_GENERATION"
    TIL_GITHUB_COMMIT = "TIL_GITHUB_COMMIT"
    RECALL_QUIZ_GENERATION = "RECALL_QUIZ_GENERATION"
    GITHUB_STAR_RECOMMENDATION = "GITHUB_STAR_RECOMMENDATION"
    GITHUB_STAR_SYNC = "GITHUB_STAR_SYNC"  # the starred repositories fetched (then ranked by the one above)
    PAGE_FETCH = "PAGE_FETCH"  # a scrapped link's page downloaded (then analysed as the scrap's text)
    TIL_INDEXING = "TIL_INDEXING"  # a day's current TIL text into search and its vector (model or text changed)


class JobStatus(StrEnum):
    """A retry waiting for its backoff is PENDING with ``run_after`` in the future."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


# How people read a job's status, in the window and on the command line alike (a stored name is not a word).
JOB_STATUS_NAMES: dict[JobStatus, str] = {
    JobStatus.PENDING: "Waiting",
    JobStatus.PROCESSING: "Running",
    JobStatus.COMPLETED: "Completed",
    JobStatus.FAILED: "Failed",
    JobStatus.CANCELLED: "Cancelled",
}

# States that mean "will still run": at most one job per (target_id, job_type) may be in them.
ACTIVE_JOB_STATUSES: tuple[JobStatus, ...] = (JobStatus.PENDING, JobStatus.PROCESSING)


class TrashKind(StrEnum):
    """What one entry of the Trash holds: one scrap deleted, several deleted at once, or an import undone."""

    SCRAP = "SCRAP"
    SCRAPS = "SCRAPS"
    IMPORT = "IMPORT"


class ErrorKind(StrEnum):
    """Whether a failed job may succeed if run again later."""

    TRANSIENT = "TRANSIENT"
    PERMANENT = "PERMANENT"


class JobPool(StrEnum):
    AI = "AI"
    GITHUB = "GITHUB"  # the network pool: GitHub and the pages of scrapped links


# How people read a pool's name (the monitor, the CLI, the Stars page).
POOL_NAMES: dict[JobPool, str] = {JobPool.AI: "AI", JobPool.GITHUB: "GitHub & web"}


class AttemptOutcome(StrEnum):
    """How one execution of a job ended; NULL in the database while it is still running."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    RETRY_SCHEDULED = "RETRY_SCHEDULED"
    RATE_LIMITED = "RATE_LIMITED"
    INTERRUPTED = "INTERRUPTED"
    CANCELLED = "CANCELLED"
    STALLED = "STALLED"
    DISCARDED = "DISCARDED"


class SourceType(StrEnum):
    TEXT = "TEXT"
    HTML = "HTML"
    URL = "URL"
    FILE = "FILE"


# Which worker pool runs each job type: GitHub work must never starve AI work, nor the reverse.
JOB_POOLS: dict[JobType, JobPool] = {
    JobType.CARD_ANALYSIS: JobPool.AI,
    JobType.SCRAP_REFINE: JobPool.AI,
    JobType.TIL_GENERATION: JobPool.AI,
    JobType.TIL_GITHUB_COMMIT: JobPool.GITHUB,
    JobType.RECALL_QUIZ_GENERATION: JobPool.AI,
    JobType.GITHUB_STAR_RECOMMENDATION: JobPool.AI,
    JobType.GITHUB_STAR_SYNC: JobPool.GITHUB,
    JobType.PAGE_FETCH: JobPool.GITHUB,  # the network pool: downloads never wait behind AI work
    JobType.TIL_INDEXING: JobPool.AI,
}


class JobTarget(StrEnum):
    """What a job's ``target_id`` names: the row whose page shows the job's work (and its label in the monitor)."""

    SCRAP = "SCRAP"  # its Inbox row, and its card
    DAY = "DAY"  # a day's TIL (the daily summary)
    COMMIT = "COMMIT"  # a TIL commit request
    QUIZ_GENERATION = "QUIZ_GENERATION"  # a day's quizzes
    ACCOUNT = "ACCOUNT"  # the GitHub account whose stars are synced and ranked


# What each job type works on, declared with the type (as its pool is): a job's change is a change of its
# target, so whoever announces a job's change reads it here, not from a list of its own.
JOB_TARGETS: dict[JobType, JobTarget] = {
    JobType.CARD_ANALYSIS: JobTarget.SCRAP,
    JobType.SCRAP_REFINE: JobTarget.SCRAP,
    JobType.PAGE_FETCH: JobTarget.SCRAP,
    JobType.TIL_GENERATION: JobTarget.DAY,
    JobType.TIL_INDEXING: JobTarget.DAY,
    JobType.TIL_GITHUB_COMMIT: JobTarget.COMMIT,
    JobType.RECALL_QUIZ_GENERATION: JobTarget.QUIZ_GENERATION,
    JobType.GITHUB_STAR_SYNC: JobTarget.ACCOUNT,
    JobType.GITHUB_STAR_RECOMMENDATION: JobTarget.ACCOUNT,
}


def job_types_on(target: JobTarget) -> frozenset[JobType]:
    return frozenset(job_type for job_type, on in JOB_TARGETS.items() if on is target)


class TilVersionKind(StrEnum):
    """A TIL text made by a generation run, or saved by the learner (never overwriting the original)."""

    GENERATED = "GENERATED"
    EDITED = "EDITED"


class CommitStatus(StrEnum):
    """A TIL commit request's own state (seed 001), beside its job's."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class CommitTarget(StrEnum):
    GITHUB = "GITHUB"
    LOCAL = "LOCAL"


class QuizType(StrEnum):
    OX = "OX"  # a statement, true (O) or false (X)
    SHORT_ANSWER = "SHORT_ANSWER"  # a question (a cloze on a key term offline) and its answer


class QuizState(StrEnum):
    """Where a quiz stands in its spaced repetition: never answered, then FSRS's own three states."""

    NEW = "NEW"
    LEARNING = "LEARNING"
    REVIEW = "REVIEW"
    RELEARNING = "RELEARNING"
