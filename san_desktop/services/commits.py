"""Committing a TIL (DESIGN.md §6): the checks before a commit request is enqueued, each with a message
that says what to do; the preview of where the file will go (the commit job's own decision, made ahead);
and the requests with their own status."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, CommitStatus, CommitTarget, JobType
from san_desktop.core.errors import PermanentError, SanError, TargetNotFoundError, TransientError
from san_desktop.core.placement import Placement, Spot
from san_desktop.core.redact import first_cause
from san_desktop.core.repo_paths import check_branch_name, check_repo_path, parse_template, path_candidates
from san_desktop.core.settings import GitHubSettings
from san_desktop.core.windows_names import is_reserved_name
from san_desktop.core.workflow import TilStatus
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, DailySummary, TilCommit, TilVersion
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.til import parse_day

LIVE = (CommitStatus.PENDING, CommitStatus.PROCESSING, CommitStatus.COMPLETED)


def where_label(target: CommitTarget, repository: str, branch: str) -> str:
    """Where a commit goes, as people read it: "GitHub owner/name (branch main)" or "local /path (branch til)"."""
    kind = "GitHub" if target is CommitTarget.GITHUB else "local"
    return f"{kind} {repository} (branch {branch})"


def default_message(title: str, *, replaces: bool) -> str:
    """ "docs: update TIL - …" when the commit replaces this TIL's own earlier file, "docs: add TIL - …" else."""
    return f"docs: {'update' if replaces else 'add'} TIL - {title}"


class CommittedOnceError(SanError):
    """This text is (being) committed at that path already: said with where, so a window can still show
    that commit's state."""

    def __init__(self, message: str, target: CommitTarget, repository: str, branch: str) -> None:
        super().__init__(message)
        self.target = target
        self.repository = repository
        self.branch = branch


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

    @property
    def where(self) -> str:
        return where_label(self.target, self.repository, self.branch)


@dataclass(frozen=True)
class CommitPreview:
    """A plan with the path looked at in the repository: ``plan.path`` is where the file goes and
    ``plan.message`` the default for that (or the one given). ``placement`` is None when the repository
    could not be looked at now (``unchecked`` says why); committing checks it again either way."""

    plan: CommitPlan
    asked: str  # the path asked for (or the default one)
    placement: Placement | None
    unchecked: str = ""


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

    @property
    def where(self) -> str:
        return where_label(self.target, self.repository, self.branch)


def slug(title: str, fallback: str) -> str:
    """A file name from a title: words (Hangul kept, so a Korean title stays readable) joined by dashes; a
    name Windows keeps for a device (a TIL titled "Con") gets an underscore, as the Markdown export's do."""
    words = re.findall(r"[0-9A-Za-z\u3131-\u318e\uac00-\ud7a3]+", title.lower())
    text = "-".join(words)[:60].strip("-") or fallback
    return f"{text}_" if is_reserved_name(text) else text


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


def written_files(session: Session, summary_id: str, repository: str, branch: str) -> set[tuple[str, str]]:
    """(path, content hash) of each file this TIL committed to ``repository`` (``branch``): such a file,
    unchanged since, may be replaced by a new version; a file anyone else wrote (or edited since) never is."""
    rows = session.execute(
        sa.select(TilCommit.path, TilCommit.content_hash).where(
            TilCommit.summary_id == summary_id,
            TilCommit.repository == repository,
            TilCommit.branch == branch,
            TilCommit.status == CommitStatus.COMPLETED,
        )
    )
    return {(path, content_hash) for path, content_hash in rows}


def replaceable_of(written: set[tuple[str, str]]) -> Callable[[str, bytes], bool]:
    """``replaceable`` of ``core.placement.place`` for the files in ``written``."""
    return lambda path, existing: (path, content_digest(existing)) in written


@dataclass(frozen=True)
class CommitWork:
    """What a commit job (``jobs.commit``) writes: where, with which message, the TIL version's text (the file
    ``artifact_key``), and which of the files there it may replace."""

    target: CommitTarget
    repository: str
    branch: str
    path: str
    message: str
    artifact_key: str
    replaceable: Callable[[str, bytes], bool]


def update_request(session: Session, request_id: str, **values: object) -> None:
    """Set ``values`` on a commit request (its status, result or error), in the caller's transaction."""
    request = session.get(TilCommit, request_id)
    if request is None:
        raise TargetNotFoundError(f"commit request {request_id}")
    for name, value in values.items():
        setattr(request, name, value)


def _info(row: TilCommit) -> CommitInfo:
    return CommitInfo(
        row.id, row.version, row.status, row.target, row.repository, row.branch, row.path, row.message,
        row.commit_sha, row.html_url, first_cause(row.error_message) or None, row.created_at,
    )  # fmt: skip


class CommitService:
    def __init__(
        self,
        db: Database,
        queue: JobStore,
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
            from san_desktop.github.local_git import repository_problem  # dulwich: see _place

            if (problem := repository_problem(settings.local_repository)) is not None:
                raise SanError(problem)
            repository, branch = str(Path(settings.local_repository).resolve()), settings.local_branch
        try:  # settings.json may hold a value from before these rules
            check_branch_name(branch)
            if path is not None:
                check_repo_path(path)
        except ValueError as exc:
            raise SanError(str(exc)) from None
        chosen = path or self._free_path(session, summary, repository, branch, settings.path_template)
        self._refuse_twice(session, target, repository, branch, chosen, version.content_hash)
        title = summary.title or local_date
        replaces = any(written == chosen for written, _hash in written_files(session, summary.id, repository, branch))
        return CommitPlan(
            summary.id, local_date, version.version, title, target, repository, branch, chosen,
            message or default_message(title, replaces=replaces), version.content_hash,
        )  # fmt: skip

    @staticmethod
    def _refuse_twice(
        session: Session, target: CommitTarget, repository: str, branch: str, path: str, content_hash: str
    ) -> None:
        """The same text at the same path of the same branch is committed once (a second click, a second
        `san til commit`); another path is the user's choice."""
        same = session.scalar(
            sa.select(TilCommit).where(
                TilCommit.repository == repository,
                TilCommit.branch == branch,
                TilCommit.path == path,
                TilCommit.content_hash == content_hash,
                _live(),
            )
        )
        if same is not None:
            state = "was already committed" if same.status is CommitStatus.COMPLETED else "is being committed"
            message = f"This text {state} to {where_label(target, repository, branch)} at {same.path}."
            raise CommittedOnceError(message, target, repository, branch)

    def preview(
        self,
        local_date: str,
        *,
        target: CommitTarget | None = None,
        path: str | None = None,
        message: str | None = None,
    ) -> CommitPreview:
        """The plan, with where the file will go looked up in the repository by the commit job's own
        decision (GitHub: over the network; call it off the GUI thread). Raises SanError as ``plan`` does,
        and when the commit could not succeed (every name taken, the branch checked out, the token refused)."""
        with self.db.sessions() as session:
            plan = self._plan(session, parse_day(local_date), target, path, message)
            written = written_files(session, plan.summary_id, plan.repository, plan.branch)
            key = session.scalar(
                sa.select(TilVersion.artifact_key).where(
                    TilVersion.summary_id == plan.summary_id, TilVersion.version == plan.version
                )
            )
        assert key is not None
        content = self.artifacts.read_text(key).encode("utf-8")  # as the job reads it
        try:
            placement = self._place(plan, content, replaceable_of(written))
        except PermanentError as exc:
            raise SanError(str(exc)) from None
        except TransientError as exc:
            unchecked = f"{plan.where} could not be looked at now ({exc}); the path is checked when committing."
            return CommitPreview(plan, plan.path, None, unchecked)
        if placement.moved:
            with self.db.sessions() as session:
                self._refuse_twice(
                    session, plan.target, plan.repository, plan.branch, placement.path, plan.content_hash
                )
        chosen = replace(
            plan,
            path=placement.path,
            message=message or default_message(plan.title, replaces=placement.spot is Spot.REPLACE),
        )
        return CommitPreview(chosen, plan.path, placement)

    def _place(self, plan: CommitPlan, content: bytes, replaceable: Callable[[str, bytes], bool]) -> Placement:
        # The local git target (dulwich) and the GitHub client (httpx) load when a commit needs them: with
        # the TIL page's import of this module they were a tenth of a second of the window's start.
        from san_desktop.github.client import GitHubClient
        from san_desktop.github.local_git import place_file

        if plan.target is CommitTarget.LOCAL:
            return place_file(Path(plan.repository), plan.branch, plan.path, content, replaceable)
        token = self.token()
        if not token:
            raise PermanentError("No GitHub token is stored: enter one in Settings or with `san github token set`.")
        with GitHubClient(self.settings().api_url, token) as github:
            return github.place(plan.repository, plan.branch, plan.path, content, replaceable)

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
        raise SanError(f"No free path near {base} in {repository} ({branch}): give another path.")

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

    def work_of(self, request_id: str) -> CommitWork:
        """What the commit job of ``request_id`` is to write."""
        with self.db.sessions() as session:
            request = session.get(TilCommit, request_id)
            if request is None:
                raise TargetNotFoundError(f"commit request {request_id}")
            key = session.scalar(
                sa.select(TilVersion.artifact_key).where(
                    TilVersion.summary_id == request.summary_id, TilVersion.version == request.version
                )
            )
            if key is None:
                raise TargetNotFoundError(f"version {request.version} of the TIL")
            written = written_files(session, request.summary_id, request.repository, request.branch)
            return CommitWork(
                request.target, request.repository, request.branch, request.path, request.message, key,
                replaceable_of(written),
            )  # fmt: skip

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
