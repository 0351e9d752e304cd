"""A small GitHub REST client for what SAN needs: who the token is, a repository's permissions, and the
contents API (read a file's blob sha, create or replace a file).

Errors become the core retry classes with a sentence a user can act on: 401 → permanent ("token
rejected"), 403/429 with an exhausted rate limit → wait until the reset, a secondary limit's Retry-After →
wait that long (neither spends an attempt), 409 → transient (the branch moved: fetch again), 422 →
permanent with GitHub's message, 404 → permanent saying whether the repository or the branch is missing,
5xx and network errors → transient. The token is registered for redaction and never put in a message.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.errors import PermanentError, RateLimitedError, TransientError
from san_desktop.core.headers import header_numbers, limit_used_up
from san_desktop.core.placement import Occupant, Placement, place
from san_desktop.core.redact import register_secret
from san_desktop.core.repo_paths import check_repo_path, check_repository_name

API_VERSION = "2022-11-28"
WRITE_INTERVAL_SECONDS = 1.0  # GitHub: content-creating requests at least a second apart

_write_locks: dict[str, threading.Lock] = {}
_last_write: dict[str, float] = {}
_registry_lock = threading.Lock()


class TokenRejectedError(PermanentError):
    pass


@dataclass(frozen=True)
class RemoteFile:
    sha: str  # the blob sha (needed to replace the file)
    content: bytes
    is_file: bool = True  # False: a folder, a link or a submodule is at the path


@dataclass(frozen=True)
class StarPage:
    """One page of the starred repositories (``GET /user/starred``, with ``starred_at``)."""

    url: str  # as asked (the next page's comes from the Link header, never built here)
    not_modified: bool  # 304 to If-None-Match: the page is as it was (and cost no rate limit)
    items: list[dict[str, Any]]  # {"starred_at": ..., "repo": {...}} each
    next_url: str | None
    etag: str | None


@dataclass(frozen=True)
class CommitResult:
    commit_sha: str
    html_url: str  # the commit on GitHub


class GitHubClient:
    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        register_secret(token)
        self.api_url = api_url.rstrip("/")
        self._clock = clock
        self._client = httpx.Client(
            base_url=self.api_url + "/",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": "san-desktop",
            },
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- requests -----------------------------------------------------------------------------

    def _request(self, method: str, path: str, *, what: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise TransientError(f"GitHub did not answer in time ({what})") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"Cannot reach {self.api_url} ({what}): {_how(exc)}") from exc
        if response.is_success or (response.status_code == 404 and method == "GET" and what == "read the file"):
            return response
        raise self._error(response, what)

    def _error(self, response: httpx.Response, what: str) -> Exception:
        status = response.status_code
        try:
            message = str(response.json().get("message") or "")
        except ValueError:
            message = ""
        detail = f"GitHub answered {status} to {what}" + (f": {message}" if message else "")
        headers = response.headers
        if status == 401:
            return TokenRejectedError(f"GitHub rejected the token (401): for a valid one, {ways_to_set(GITHUB_TOKEN)}")
        if status in (403, 429) and (retry_after := header_numbers(headers.get("retry-after"))):
            return RateLimitedError(f"{detail} (secondary rate limit)", max(retry_after))
        if status in (403, 429) and limit_used_up(headers.get("x-ratelimit-remaining")):
            reset = max(header_numbers(headers.get("x-ratelimit-reset")) or [0.0])
            return RateLimitedError(f"{detail} (rate limit used up)", max(0.0, reset - time.time()))
        if status == 409:
            return TransientError(f"{detail} (the branch moved meanwhile; it is fetched again)")
        if status == 404:
            return PermanentError(detail)
        if status >= 500:
            return TransientError(detail)
        return PermanentError(detail)

    def starred_page(self, url: str | None = None, etag: str | None = None) -> StarPage:
        """A page of the token's starred repositories, newest star first; the first page when ``url`` is
        None. With ``etag``, asked conditionally."""
        first = url is None
        headers = {"Accept": "application/vnd.github.star+json"}
        if etag:
            headers["If-None-Match"] = etag
        asked = url or "user/starred"
        params = {"per_page": 100} if first else None
        try:
            response = self._client.get(asked, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise TransientError("GitHub did not answer in time (list the starred repositories)") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"Cannot reach {self.api_url} (list the starred repositories): {_how(exc)}") from exc
        page_url = str(response.request.url)
        if response.status_code == 304:
            return StarPage(page_url, True, [], None, etag)
        if not response.is_success:
            raise self._error(response, "list the starred repositories")
        items = response.json()
        if not isinstance(items, list):
            raise TransientError("GitHub's list of starred repositories was not a list")
        next_link = response.links.get("next", {}).get("url")
        return StarPage(page_url, False, items, next_link, response.headers.get("etag"))

    def user(self) -> str:
        """The login the token belongs to."""
        return str(self._request("GET", "user", what="check the token").json().get("login", "?"))

    def can_push(self, repository: str) -> bool:
        """Whether the token may push to ``owner/name`` (404 when it cannot even see it)."""
        response = self._request("GET", _repo(repository), what=f"look at the repository {repository}")
        return bool((response.json().get("permissions") or {}).get("push"))

    def branch_exists(self, repository: str, branch: str) -> bool:
        try:
            self._request("GET", f"{_repo(repository)}/branches/{quote(branch, safe='')}", what=f"find branch {branch}")
        except PermanentError as exc:
            if " 404 " in f" {exc} ":
                return False
            raise
        return True

    def read_file(self, repository: str, path: str, branch: str) -> RemoteFile | None:
        response = self._request("GET", _contents(repository, path), what="read the file", params={"ref": branch})
        if response.status_code == 404:
            return None
        data = response.json()
        if not isinstance(data, dict) or data.get("type") != "file":
            return RemoteFile(sha="", content=b"", is_file=False)  # a folder lists its entries
        return RemoteFile(sha=str(data["sha"]), content=base64.b64decode(data.get("content") or ""))

    def place(
        self, repository: str, branch: str, path: str, content: bytes, replaceable: Callable[[str, bytes], bool]
    ) -> Placement:
        """Where ``content`` goes for ``path`` on ``branch`` (``core.placement``: reads each name tried),
        for the commit job and the review window's preview alike."""

        def look(candidate: str) -> Occupant | None:
            found = self.read_file(repository, candidate, branch)
            return None if found is None else Occupant(found.is_file, found.content, found.sha)

        return place(path, content, look, replaceable, f"in {repository} ({branch})")

    def last_commit(self, repository: str, path: str, branch: str) -> CommitResult:
        """The newest commit that touched ``path`` on ``branch``."""
        response = self._request(
            "GET",
            f"{_repo(repository)}/commits",
            what="find the commit of the file",
            params={"path": path, "sha": branch, "per_page": 1},
        )
        items = response.json()
        if not isinstance(items, list) or not items:
            raise TransientError(f"GitHub lists no commit of {path} yet")
        return CommitResult(commit_sha=str(items[0].get("sha", "")), html_url=str(items[0].get("html_url", "")))

    def put_file(
        self, repository: str, path: str, branch: str, content: bytes, message: str, sha: str | None
    ) -> CommitResult:
        """Create (``sha`` None) or replace a file in one commit; at most one write per repository at a
        time and a second between writes."""
        body: dict[str, Any] = {
            "message": message,
            "content": base64.b64encode(content).decode("ascii"),
            "branch": branch,
        }
        if sha:
            body["sha"] = sha
        with _write_lock(repository):
            wait = _last_write.get(repository, -1e9) + WRITE_INTERVAL_SECONDS - self._clock()
            if wait > 0:
                time.sleep(wait)
            try:
                response = self._request("PUT", _contents(repository, path), what=f"write {path}", json=body)
            finally:
                _last_write[repository] = self._clock()
        commit = response.json().get("commit") or {}
        return CommitResult(commit_sha=str(commit.get("sha", "")), html_url=str(commit.get("html_url", "")))


def _how(exc: httpx.TransportError) -> str:
    """What went wrong on the way, in words (the cause chain keeps httpx's own account)."""
    if isinstance(exc, httpx.ConnectError):
        return "could not connect (no server answers there, or the name is unknown)"
    if isinstance(exc, httpx.ProxyError):
        return "the proxy refused the connection"
    return "the connection broke off"


def _write_lock(repository: str) -> threading.Lock:
    with _registry_lock:
        return _write_locks.setdefault(repository, threading.Lock())


def _repo(repository: str) -> str:
    """``repos/{owner}/{name}`` with both checked (``owner/..`` would reach another endpoint) and encoded."""
    try:
        owner, name = check_repository_name(repository)
    except ValueError as exc:
        raise PermanentError(str(exc)) from None
    return f"repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _contents(repository: str, path: str) -> str:
    """The contents URL of ``path``: checked (no empty, ``.`` or ``..`` part that URL resolution would
    fold away) and each part encoded."""
    try:
        check_repo_path(path)
    except ValueError as exc:
        raise PermanentError(str(exc)) from None
    return f"{_repo(repository)}/contents/" + "/".join(quote(part, safe="") for part in path.split("/"))
