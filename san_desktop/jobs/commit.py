"""TIL_GITHUB_COMMIT (target: a ``til_github_commits`` row), on the GitHub pool.

GitHub: where the file goes is ``core.placement``'s decision (the review window shows the same one ahead):
if the same content is already there (a run that died after GitHub accepted its write), record that commit
instead of making a second; if a file this TIL did not write is there (or one it wrote, edited since), or
a folder, take the next free name (-1 … -20); otherwise write it (with the blob sha when replacing this
TIL's own earlier file). Local: one commit under the same rules, on a branch no
work tree has checked out (``github.local_git``). The request row and the job finish in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.enums import AttemptOutcome, CommitStatus, CommitTarget
from san_desktop.core.errors import PermanentError
from san_desktop.core.placement import Spot
from san_desktop.core.redact import error_message
from san_desktop.core.repo_paths import check_branch_name, check_repo_path, check_repository_name
from san_desktop.core.settings import GitHubSettings
from san_desktop.github.client import CommitResult, GitHubClient
from san_desktop.github.local_git import commit_file
from san_desktop.jobs.classify import classify
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.errors import JobInterruptedError, JobSupersededError
from san_desktop.services.commits import CommitService, update_request

log = logging.getLogger(__name__)


class TilCommitProcessor:
    def __init__(
        self, commits: CommitService, settings: Callable[[], GitHubSettings], token: Callable[[], str | None]
    ) -> None:
        self.commits = commits
        self.settings = settings
        self.token = token

    def __call__(self, context: JobContext) -> None:
        request_id = context.job.target_id
        work = self.commits.work_of(request_id)
        target, repository, branch, path, message = work.target, work.repository, work.branch, work.path, work.message
        replaceable = work.replaceable
        content = context.files.store.read_text(work.artifact_key).encode("utf-8")
        with context.checkpoint() as session:
            update_request(session, request_id, status=CommitStatus.PROCESSING, error_message=None)

        try:
            if target is CommitTarget.LOCAL:
                settings = self.settings()
                local = commit_file(
                    Path(repository), branch, path, content, message, settings.author_name, settings.author_email,
                    replaceable,
                )  # fmt: skip
                result, path = CommitResult(local.commit_sha, ""), local.path
            else:
                result, path = self._github(repository, branch, path, content, message, replaceable)
        except (JobInterruptedError, JobSupersededError):
            raise
        except Exception as exc:
            self._failed(context, request_id, exc)
            raise
        with context.publish() as session:
            update_request(
                session,
                request_id,
                status=CommitStatus.COMPLETED,
                commit_sha=result.commit_sha,
                html_url=result.html_url or None,
                path=path,
                error_message=None,
            )
        log.info("TIL committed to %s (%s) at %s: %s", repository, branch, path, result.commit_sha)

    def _github(
        self,
        repository: str,
        branch: str,
        path: str,
        content: bytes,
        message: str,
        replaceable: Callable[[str, bytes], bool],
    ) -> tuple[CommitResult, str]:
        token = self.token()
        if not token:
            raise PermanentError(f"No GitHub token: {ways_to_set(GITHUB_TOKEN)}.")
        try:  # a request stored before these rules were checked at request time
            check_repository_name(repository)
            check_branch_name(branch)
            check_repo_path(path)
        except ValueError as exc:
            raise PermanentError(str(exc)) from None
        with GitHubClient(self.settings().api_url, token) as github:
            placement = github.place(repository, branch, path, content, replaceable)
            if placement.spot is Spot.SAME:
                # already written (the app died after GitHub accepted it): record it, no second commit
                return github.last_commit(repository, placement.path, branch), placement.path
            try:
                sha = placement.sha if placement.spot is Spot.REPLACE else None
                return github.put_file(repository, placement.path, branch, content, message, sha), placement.path
            except PermanentError as exc:
                if " 404" in str(exc):
                    raise self._missing(github, repository, branch) from exc
                raise

    @staticmethod
    def _missing(github: GitHubClient, repository: str, branch: str) -> PermanentError:
        try:
            github.can_push(repository)
        except PermanentError:
            return PermanentError(f"The repository {repository} does not exist, or the token cannot see it")
        if not github.branch_exists(repository, branch):
            return PermanentError(
                f"The branch {branch} does not exist in {repository}: create it, or set github.branch"
            )
        return PermanentError(f"GitHub answered 404 writing to {repository} ({branch})")

    @staticmethod
    def _failed(context: JobContext, request_id: str, exc: BaseException) -> None:
        """The request says why; FAILED only when the job will not try again by itself (as the queue will
        decide, asked the same question: a rate limit too long to wait out on the last attempt fails both)."""
        outcome = context.queue.outcome_of(context.claim, exc, classify(exc))
        final = outcome in (AttemptOutcome.FAILED, AttemptOutcome.CANCELLED)
        try:
            with context.db.write() as session:
                if context.queue.still_owned(session, context.claim):
                    status = CommitStatus.FAILED if final else CommitStatus.PROCESSING
                    update_request(session, request_id, status=status, error_message=error_message(exc))
        except Exception:
            log.exception("Could not record the failure of commit request %s", request_id)
