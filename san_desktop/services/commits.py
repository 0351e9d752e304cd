"""Committing a TIL (DESIGN.md §6): the checks before a commit request is enqueued, each with a message
that says what to do, and the requests with their own status."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, CommitStatus, CommitTarget, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.redact import first_cause
from san_desktop.core.repo_paths import check_branch_name, check_repo_path, parse_template, path_candidates
from san_desktop.core.settings import GitHubSettings
from san_desktop.core.workflow import TilStatus
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, DailySummary, TilCommit, TilVersion
from san_desktop.github.local_git import repository_problem
from san_desktop.queue.job_queue import JobQueue
from san_desktop.queue.records import JobRecord
from san_desktop.services.til import parse_day

LIVE = (CommitStatus.PENDING, CommitStatus.PROCESSING, CommitStatus.COMPLETED)


@dataclass(frozen=True)
class CommitPlan:
    summary_id: str
    local_date: str
    version: int
    title: str
    target: CommitTarget
    repository: str
    branch: str
    path: str
    message: str
    content_hash: str


@dataclass(frozen=True)
class CommitInfo:
    id: str
    version: int
    status: CommitStatus
    target: CommitTarget
    repository: str
    branch: str
    path: str
    message: str
    commit_sha: str | None
    html_url: str | None
    error_message: str | None  # the failure as a person reads it (the job keeps the cause chain)
    created_at: datetime


def slug(title: str, fallback: str) -> str:
    """A file name from a title: words (Hangul kept, so a Korean title stays readable) joined by dashes."""
    words = re.findall(r"[0-9A-Za-z\u3131-\u318e\uac00-\ud7a3]+", title.lower())
    text = "-".join(words)[:60].strip("-")
    return text or fallback


def render_path(template: str, local_date: str, title: str) -> str:
    """The file path of a day's TIL; ValueError when the template or the path it gives is refused."""
    return parse_template(template).render(local_date, slug(title, local_date))


def _live() -> sa.ColumnElement[bool]:
    """A request that is done, or that a job will still run (a cancelled or failed job's is neither)."""
    waiting = sa.exists().where(
        AsyncJob.target_id == TilCommit.id,
        AsyncJob.job_type == JobType.TIL_GITHUB_COMMIT,
        AsyncJob.status.in_(ACTIVE_JOB_STATUSES),
    )
    return sa.or_(TilCommit.status == CommitStatus.COMPLETED, sa.and_(TilCommit.status.in_(LIVE), waiting))


def _info(row: TilCommit) -> CommitInfo:
    return CommitInfo(
        row.id, row.version, row.status, row.target, row.repository, row.branch, row.path, row.message,
        row.commit_sha, row.html_url, first_cause(row.error_message) or None, row.created_at,
    )  # fmt: skip


class CommitService:
    def __init__(
        self,
        db: Database,
        queue: JobQueue,
        artifacts: ArtifactStore,
        settings: Callable[[], GitHubSettings],
        token: Callable[[], str | None],
    ) -> None:
        self.db = db
        self.queue = queue
        self.artifacts = artifacts
        self.settings = settings
        self.token = token

    def plan(
        self,
        local_date: str,
        *,
        target: CommitTarget | None = None,
        path: str | None = None,
        message: str | None = None,
    ) -> CommitPlan:
        """What committing the day's current TIL would do; raises SanError saying what is in the way."""
        with self.db.sessions() as session:
            return self._plan(session, parse_day(local_date), target, path, message)

    def _plan(
        self,
        session: Session,
        local_date: str,
        target: CommitTarget | None,
        path: str | None,
        message: str | None,
    ) -> CommitPlan:
        settings = self.settings()
        summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == local_date))
        if summary is None or summary.current_version is None:
            raise SanError(f"The TIL of {local_date} has no text yet: generate it first.")
        if summary.status is not TilStatus.COMPLETED:
            raise SanError(f"The TIL of {local_date} is {summary.status.value.lower()}: wait until it is complete.")
        version = session.scalar(
            sa.select(TilVersion).where(
                TilVersion.summary_id == summary.id, TilVersion.version == summary.current_version
            )
        )
        assert version is not None
        target = target or CommitTarget(settings.target.upper())
        if target is CommitTarget.GITHUB:
            if not settings.repository:
                raise SanError("No GitHub repository is set: set github.repository (owner/name) in Settings.")
            if not self.token():
                raise SanError(f"No GitHub token: {ways_to_set(GITHUB_TOKEN)}.")
            repository, branch = settings.repository, settings.branch
        else:
            if (problem := repository_problem(settings.local_repository)) is not None:
                raise SanError(problem)
            repository, branch = str(Path(settings.local_repository).resolve()), settings.local_branch
        try:  # settings.json may hold a value from before these rules
            check_branch_name(branch)
            if path is not None:
                check_repo_path(path)
        except ValueError as exc:
            raise SanError(str(exc)) from None
        content_hash = version.content_hash
        same = session.scalar(
            sa.select(TilCommit).where(
                TilCommit.repository == repository,
                TilCommit.branch == branch,
                TilCommit.content_hash == content_hash,
                _live(),
            )
        )
        if same is not None:
            state = "was already committed" if same.status is CommitStatus.COMPLETED else "is being committed"
            raise SanError(f"This text {state} to {repository} ({branch}) at {same.path}.")
        chosen = path or self._free_path(session, summary, repository, branch, settings.path_template)
        title = summary.title or local_date
        return CommitPlan(
            summary.id, local_date, version.version, title, target, repository, branch, chosen,
            message or f"docs: add TIL - {title}", content_hash,
        )  # fmt: skip

    def _free_path(self, session: Session, summary: DailySummary, repository: str, branch: str, template: str) -> str:
        """This TIL's earlier path (a new version replaces the file), or the template's, with -1 … -20
        when another TIL took it."""
        earlier = session.scalar(
            sa.select(TilCommit.path)
            .where(
                TilCommit.summary_id == summary.id,
                TilCommit.repository == repository,
                TilCommit.branch == branch,
                TilCommit.status == CommitStatus.COMPLETED,
            )
            .order_by(TilCommit.created_at.desc())
            .limit(1)
        )
        if earlier:
            return earlier
        taken = set(
            session.scalars(
                sa.select(TilCommit.path).where(
                    TilCommit.repository == repository,
                    TilCommit.branch == branch,
                    TilCommit.summary_id != summary.id,
                    _live(),
                )
            )
        )
        try:
            base = render_path(template, summary.local_date, summary.title or summary.local_date)
        except ValueError as exc:
            raise SanError(f"{exc} Change github.path_template in Settings, or give a path.") from None
        for candidate in path_candidates(base):
            if candidate not in taken:
                return candidate
        raise SanError(f"No free path near {base} in {repository} ({branch}): give one with --path.")

    def request(
        self,
        local_date: str,
        *,
        target: CommitTarget | None = None,
        path: str | None = None,
        message: str | None = None,
    ) -> tuple[CommitInfo, JobRecord]:
        """Check, then record the request and enqueue its job in one transaction."""
        local_date = parse_day(local_date)
        with self.db.write() as session:
            plan = self._plan(session, local_date, target, path, message)  # again, under the write lock
            row = TilCommit(
                summary_id=plan.summary_id,
                version=plan.version,
                status=CommitStatus.PENDING,
                target=plan.target,
                repository=plan.repository,
                branch=plan.branch,
                path=plan.path,
                message=plan.message,
                content_hash=plan.content_hash,
            )
            session.add(row)
            session.flush()
            job = self.queue.enqueue(JobType.TIL_GITHUB_COMMIT, row.id, session=session)
            return _info(row), job

    def labels(self, commit_ids: list[str]) -> dict[str, str]:
        """A human label per commit request ("TIL of 2026-11-30 to owner/name"), for job lists."""
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(TilCommit.id, DailySummary.local_date, TilCommit.repository)
                .join(DailySummary, DailySummary.id == TilCommit.summary_id)
                .where(TilCommit.id.in_(commit_ids))
            ).all()
        return {commit_id: f"TIL of {local_date} to {repository}" for commit_id, local_date, repository in rows}

    def list(self, local_date: str) -> list[CommitInfo]:
        with self.db.sessions() as session:
            rows = session.scalars(
                sa.select(TilCommit)
                .join(DailySummary, DailySummary.id == TilCommit.summary_id)
                .where(DailySummary.local_date == parse_day(local_date))
                .order_by(TilCommit.created_at)
            )
            return [_info(row) for row in rows]


def content_digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()
