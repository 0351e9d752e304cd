"""Typed SQLAlchemy models. The schema itself is created by the Alembic migrations in migrations/;
a drift guard test checks that migrating to head yields exactly what these models describe.

The tables that capturing a scrap writes are declared as Core tables in ``db.tables`` (a command line
capture does not load the ORM); their models here are mapped onto them, so each table is declared once."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from san_desktop.core.enums import (
    AttemptOutcome,
    CommitStatus,
    CommitTarget,
    ErrorKind,
    JobPool,
    JobStatus,
    JobType,
    QuizState,
    QuizType,
    SourceType,
    TilVersionKind,
)
from san_desktop.core.ids import new_id
from san_desktop.core.timeutil import utcnow
from san_desktop.core.workflow import TilStatus
from san_desktop.db import tables
from san_desktop.db.types import UTCDateTime, enum_column_type

ID = tables.ID


class Base(DeclarativeBase):
    metadata = tables.metadata
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime()}


def _id_column() -> Mapped[str]:
    return mapped_column(ID, primary_key=True, default=new_id)


def _created_column() -> Mapped[datetime]:
    return mapped_column(default=utcnow)


class AppSession(Base):
    """One row per app start; work owned by a session whose process is gone is recovered."""

    __tablename__ = "app_sessions"

    id: Mapped[str] = _id_column()
    pid: Mapped[int]
    hostname: Mapped[str] = mapped_column(sa.String(255))
    kind: Mapped[str] = mapped_column(sa.String(20))  # "gui", "headless" or "cli"
    app_version: Mapped[str] = mapped_column(sa.String(40))
    started_at: Mapped[datetime] = _created_column()
    ended_at: Mapped[datetime | None]
    # the data folder it runs from (``core.paths.machine_id``): a machine of a shared library; NULL before 0021
    machine_id: Mapped[str | None] = mapped_column(sa.String(36))


class Scrap(Base):
    __table__ = tables.scraps

    id: Mapped[str]
    source_type: Mapped[SourceType]
    source_ref: Mapped[str | None]
    content: Mapped[str]
    raw_content: Mapped[str | None]
    content_hash: Mapped[str]
    title: Mapped[str | None]
    refined_content: Mapped[str | None]
    created_at: Mapped[datetime]
    deleted_at: Mapped[datetime | None]
    fetch_stopped: Mapped[bool]
    analysis_stopped: Mapped[bool]
    refine_stopped: Mapped[bool]
    import_batch_id: Mapped[str | None]
    given_tags: Mapped[str | None]
    given_card: Mapped[str | None]
    trash_id: Mapped[str | None]
    import_key: Mapped[str | None]

    card: Mapped[KnowledgeCard | None] = relationship(back_populates="scrap")


class Category(Base):
    __tablename__ = "categories"

    id: Mapped[str] = _id_column()
    name: Mapped[str] = mapped_column(sa.String(100))
    # casefolded name: get-or-create is case-insensitive and the unique constraint enforces it
    name_key: Mapped[str] = mapped_column(sa.String(100), unique=True)
    created_at: Mapped[datetime] = _created_column()


card_tags = sa.Table(
    "card_tags",
    Base.metadata,
    sa.Column("card_id", ID, sa.ForeignKey("knowledge_cards.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tag_id", ID, sa.ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
    sa.Index("ix_card_tags_tag_id", "tag_id"),
    sqlite_with_rowid=False,  # the primary key is the table (revision 0008)
)


class Tag(Base):
    __tablename__ = "tags"

    id: Mapped[str] = _id_column()
    name: Mapped[str] = mapped_column(sa.String(100))
    name_key: Mapped[str] = mapped_column(sa.String(100), unique=True)
    created_at: Mapped[datetime] = _created_column()


class KnowledgeCard(Base):
    __table__ = tables.knowledge_cards

    id: Mapped[str]
    scrap_id: Mapped[str]
    title: Mapped[str]
    summary: Mapped[str]
    category_id: Mapped[str | None]
    embedding_model: Mapped[str | None]
    title_edited: Mapped[bool]
    summary_edited: Mapped[bool]
    tags_edited: Mapped[bool]
    category_edited: Mapped[bool]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    scrap: Mapped[Scrap] = relationship(back_populates="card")
    category: Mapped[Category | None] = relationship()
    tags: Mapped[list[Tag]] = relationship(secondary=card_tags)


class CardEmbedding(Base):
    """The canonical copy of each card's vector (``db.vectors.to_stored``: a float32 scale and one int8 per
    dimension; float32 little-endian in rows written before revision 0008), with its model and dimension.

    sqlite-vec indexes are derived from these rows per (model, dimension) and can be rebuilt; vectors of
    different models are never compared.
    """

    __tablename__ = "card_embeddings"

    card_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("knowledge_cards.id", ondelete="CASCADE"), primary_key=True)
    model_id: Mapped[str] = mapped_column(sa.String(200), index=True)
    dim: Mapped[int]
    vector: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created_at: Mapped[datetime] = _created_column()


class AsyncJob(Base):
    """The job queue and its record (``tables.async_jobs``)."""

    __table__ = tables.async_jobs

    id: Mapped[str]
    job_type: Mapped[JobType]
    target_id: Mapped[str]
    status: Mapped[JobStatus]
    payload: Mapped[str | None]
    error_message: Mapped[str | None]
    error_kind: Mapped[ErrorKind | None]
    attempts: Mapped[int]
    max_attempts: Mapped[int]
    run_after: Mapped[datetime | None]
    owner_session: Mapped[str | None]
    lease_until: Mapped[datetime | None]
    run_id: Mapped[str | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    attempt_rows: Mapped[list[JobAttempt]] = relationship(back_populates="job", order_by="JobAttempt.started_at")


class JobAttempt(Base):
    """One execution of a job; ``outcome`` is NULL while it runs."""

    __tablename__ = "job_attempts"

    id: Mapped[str] = _id_column()
    job_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("async_jobs.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int]
    run_id: Mapped[str] = mapped_column(ID)
    session_id: Mapped[str] = mapped_column(ID)
    pool: Mapped[JobPool] = mapped_column(enum_column_type(JobPool, "pool"))
    started_at: Mapped[datetime] = _created_column()
    ended_at: Mapped[datetime | None]
    outcome: Mapped[AttemptOutcome | None] = mapped_column(enum_column_type(AttemptOutcome, "outcome"))
    error_text: Mapped[str | None] = mapped_column(sa.Text)

    job: Mapped[AsyncJob] = relationship(back_populates="attempt_rows")


class ChangeNotice(Base):
    """A change another open window should show (``tables.change_notices``)."""

    __table__ = tables.change_notices

    id: Mapped[int]
    origin: Mapped[str]
    kind: Mapped[str]
    item_id: Mapped[str]
    created_at: Mapped[datetime]


class DailySummary(Base):
    """One "Today I Learned" per local day, with where its workflow stands (``core.workflow``)."""

    __tablename__ = "daily_summaries"

    id: Mapped[str] = _id_column()
    local_date: Mapped[str] = mapped_column(sa.String(10), unique=True)  # YYYY-MM-DD in the learner's zone
    status: Mapped[TilStatus] = mapped_column(enum_column_type(TilStatus, "status"), default=TilStatus.CREATED)
    title: Mapped[str | None] = mapped_column(sa.String(200))
    current_version: Mapped[int | None]
    last_failed_step: Mapped[str | None] = mapped_column(sa.String(20))
    last_error_message: Mapped[str | None] = mapped_column(sa.String(1000))
    # which cards in which state the current version was made from; NULL when they changed meanwhile
    input_revision: Mapped[str | None] = mapped_column(sa.String(64))
    created_at: Mapped[datetime] = _created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Artifact(Base):
    """A generated file of a library on a server (``services.artifact_stores``): kept in the database, so that
    every machine sharing the library reads it. A SQLite library keeps its files in the data folder."""

    __tablename__ = "artifacts"

    key: Mapped[str] = mapped_column(sa.String(300), primary_key=True)  # as a file's: ``til/<name>``
    data: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created_at: Mapped[datetime] = _created_column()


class LibrarySetting(Base):
    """A setting a library shared by several machines keeps for all of them (``core.settings.SHARED_SETTINGS``),
    as JSON; only a library on a server has rows here."""

    __tablename__ = "library_settings"

    name: Mapped[str] = mapped_column(sa.String(100), primary_key=True)  # "github.repository"
    value: Mapped[str] = mapped_column(sa.Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class TilVersion(Base):
    """Every generated or edited TIL text; the text itself is a file (``artifact_key``)."""

    __tablename__ = "til_versions"
    __table_args__ = (sa.UniqueConstraint("summary_id", "version"),)

    id: Mapped[str] = _id_column()
    summary_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("daily_summaries.id", ondelete="CASCADE"))
    version: Mapped[int]
    kind: Mapped[TilVersionKind] = mapped_column(enum_column_type(TilVersionKind, "kind"))
    artifact_key: Mapped[str] = mapped_column(sa.String(300))
    content_hash: Mapped[str] = mapped_column(sa.String(64))
    input_revision: Mapped[str | None] = mapped_column(sa.String(64))
    run_id: Mapped[str | None] = mapped_column(ID)
    created_at: Mapped[datetime] = _created_column()


class TilEmbedding(Base):
    """The vector of a day's current TIL text (``db.vectors.to_stored``) in one model's space, and the
    version it was made from: made again (TIL_INDEXING) when either changes. Star ranking reads these; so
    does search by meaning."""

    __tablename__ = "til_embeddings"

    summary_id: Mapped[str] = mapped_column(
        ID, sa.ForeignKey("daily_summaries.id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[int]
    model_id: Mapped[str] = mapped_column(sa.String(200), index=True)
    dim: Mapped[int]
    vector: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created_at: Mapped[datetime] = _created_column()


class TilStepOutput(Base):
    """What a finished workflow step produced (a file, small JSON data), so a retry reuses it."""

    __tablename__ = "til_step_outputs"
    __table_args__ = (sa.Index("ix_til_step_outputs_summary_id_step", "summary_id", "step"),)

    id: Mapped[str] = _id_column()
    summary_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("daily_summaries.id", ondelete="CASCADE"))
    step: Mapped[str] = mapped_column(sa.String(20))
    run_id: Mapped[str] = mapped_column(ID)
    artifact_key: Mapped[str | None] = mapped_column(sa.String(300))
    data: Mapped[str | None] = mapped_column(sa.Text)  # JSON
    created_at: Mapped[datetime] = _created_column()


class TilCommit(Base):
    """One request to commit a TIL version to GitHub or to a local repository (``til_github_commits``)."""

    __tablename__ = "til_github_commits"
    __table_args__ = (sa.Index("ix_til_github_commits_target_content", "repository", "branch", "content_hash"),)

    id: Mapped[str] = _id_column()
    summary_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("daily_summaries.id", ondelete="CASCADE"), index=True)
    version: Mapped[int]
    status: Mapped[CommitStatus] = mapped_column(enum_column_type(CommitStatus, "status"), default=CommitStatus.PENDING)
    target: Mapped[CommitTarget] = mapped_column(enum_column_type(CommitTarget, "target"))
    repository: Mapped[str] = mapped_column(sa.String(500))  # owner/name, or the local folder
    branch: Mapped[str] = mapped_column(sa.String(250))
    path: Mapped[str] = mapped_column(sa.String(500))
    message: Mapped[str] = mapped_column(sa.String(500))
    content_hash: Mapped[str] = mapped_column(sa.String(64))
    commit_sha: Mapped[str | None] = mapped_column(sa.String(64))
    html_url: Mapped[str | None] = mapped_column(sa.String(500))
    error_message: Mapped[str | None] = mapped_column(sa.String(1000))
    created_at: Mapped[datetime] = _created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class RecallQuizGeneration(Base):
    """A request for a day's quizzes of some types (``recall_quiz_generations``; its job's target)."""

    __tablename__ = "recall_quiz_generations"
    __table_args__ = (sa.UniqueConstraint("local_date", "quiz_types"),)

    id: Mapped[str] = _id_column()
    local_date: Mapped[str] = mapped_column(sa.String(10))
    quiz_types: Mapped[str] = mapped_column(sa.String(40))  # "OX,SHORT_ANSWER", sorted
    made: Mapped[int] = mapped_column(default=0)  # quizzes the last run added
    dropped: Mapped[int] = mapped_column(default=0)  # drafts the last run dropped: their answer was not in the card
    created_at: Mapped[datetime] = _created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class RecallQuiz(Base):
    """One quiz about one card, with its FSRS scheduling state; one per card and quiz type."""

    __tablename__ = "recall_quizzes"
    __table_args__ = (
        sa.UniqueConstraint("card_id", "quiz_type"),
        # the review queue walks it in due order; due counts read it alone
        sa.Index("ix_recall_quizzes_suspended_due_at_state", "suspended", "due_at", "state"),
    )

    id: Mapped[str] = _id_column()
    card_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("knowledge_cards.id", ondelete="CASCADE"))
    generation_id: Mapped[str | None] = mapped_column(
        ID, sa.ForeignKey("recall_quiz_generations.id", ondelete="SET NULL")
    )
    quiz_type: Mapped[QuizType] = mapped_column(enum_column_type(QuizType, "quiz_type"))
    question: Mapped[str] = mapped_column(sa.Text)  # the statement of an OX quiz
    answer: Mapped[str] = mapped_column(sa.Text)  # "O" or "X" for OX
    accepted: Mapped[str] = mapped_column(sa.Text, default="[]")  # JSON list of other accepted answers
    explanation: Mapped[str] = mapped_column(sa.Text, default="")
    state: Mapped[QuizState] = mapped_column(enum_column_type(QuizState, "state"), default=QuizState.NEW)
    fsrs_card: Mapped[str] = mapped_column(sa.Text)  # py-fsrs Card as JSON
    due_at: Mapped[datetime]
    suspended: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = _created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class RecallQuizReview(Base):
    """Every answer: nothing is rescheduled without one of these."""

    __tablename__ = "recall_quiz_reviews"

    id: Mapped[str] = _id_column()
    quiz_id: Mapped[str] = mapped_column(ID, sa.ForeignKey("recall_quizzes.id", ondelete="CASCADE"), index=True)
    rating: Mapped[int]  # 1 Again, 2 Hard, 3 Good, 4 Easy
    reviewed_at: Mapped[datetime]
    duration_ms: Mapped[int | None]
    state_before: Mapped[QuizState] = mapped_column(enum_column_type(QuizState, "state_before"))
    due_after: Mapped[datetime]


class StarredRepository(Base):
    """A repository the learner starred on GitHub (``gone`` once a full sync no longer finds it), with its
    embedding cached per model for the ranking."""

    __tablename__ = "starred_repositories"

    id: Mapped[str] = _id_column()
    full_name: Mapped[str] = mapped_column(sa.String(200), unique=True)  # owner/name
    description: Mapped[str] = mapped_column(sa.Text, default="")
    language: Mapped[str | None] = mapped_column(sa.String(100))
    topics: Mapped[str] = mapped_column(sa.Text, default="[]")  # JSON list
    stars: Mapped[int] = mapped_column(default=0)
    html_url: Mapped[str] = mapped_column(sa.String(500))
    starred_at: Mapped[datetime]
    pushed_at: Mapped[datetime | None]
    archived: Mapped[bool] = mapped_column(default=False)
    fork: Mapped[bool] = mapped_column(default=False)
    gone: Mapped[bool] = mapped_column(default=False)
    not_interested: Mapped[bool] = mapped_column(default=False)
    embedding: Mapped[bytes | None] = mapped_column(sa.LargeBinary)  # db.vectors.to_stored
    embedding_model: Mapped[str | None] = mapped_column(sa.String(200))
    created_at: Mapped[datetime] = _created_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class HttpCache(Base):
    """The ETag of a fetched page and what it held, so the next request can be conditional (a 304 costs
    GitHub no rate limit) and still know the page's items."""

    __tablename__ = "http_cache"

    url: Mapped[str] = mapped_column(sa.String(1000), primary_key=True)
    etag: Mapped[str] = mapped_column(sa.String(200))
    items: Mapped[str] = mapped_column(sa.Text, default="[]")  # JSON: what the page listed (repository names)
    fetched_at: Mapped[datetime]


class StarRecommendation(Base):
    """One ranked repository of one ranking run; the latest run is what the Stars page shows."""

    __tablename__ = "star_recommendations"
    __table_args__ = (sa.Index("ix_star_recommendations_run_id_rank", "run_id", "rank"),)

    id: Mapped[str] = _id_column()
    run_id: Mapped[str] = mapped_column(ID)
    repository_id: Mapped[str] = mapped_column(
        ID, sa.ForeignKey("starred_repositories.id", ondelete="CASCADE"), index=True
    )
    rank: Mapped[int]
    score: Mapped[float] = mapped_column(sa.Float)
    reason: Mapped[str] = mapped_column(sa.Text)
    created_at: Mapped[datetime] = _created_column()
