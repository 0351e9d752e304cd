"""A local HTTP server speaking the part of GitHub's REST API that SAN uses, on 127.0.0.1: the token
(GET /user), a repository and its branches, the contents API with sha semantics, and a file's commits;
with scripted failures for the next write (401, 409, 422, rate limits, 500) and a write whose answer it
holds (accepted, but the client is killed before it hears so)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.local_http import serving

TOKEN = "ghp_testTOKENdoNOTleak0123456789abcdef"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class FakeGitHub:
    repository: str = "me/til"
    branches: set[str] = field(default_factory=lambda: {"main"})
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (branch, path) -> content
    commits: list[dict[str, str]] = field(default_factory=list)  # {sha, path, branch, message, html_url}
    requests: list[Request] = field(default_factory=list)
    next_put: list[str] = field(default_factory=list)  # behaviours for the coming writes, in order
    hold_put: bool = False  # store the next write, then hold its answer until ``release``
    put_held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    # starred repositories, newest star first: {"starred_at": ISO time, "repo": {full_name, ...}}
    starred: list[dict[str, Any]] = field(default_factory=list)
    next_starred: list[str] = field(default_factory=list)  # behaviours for the coming star pages: 401, ratelimit
    url: str = ""

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method == "PUT"]

    def star(self, full_name: str, description: str = "", topics: tuple[str, ...] = (), **repo: Any) -> None:
        """Star a repository now (it comes first, as GitHub lists the newest star first)."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + len(self.starred)))
        entry = {"full_name": full_name, "description": description, "topics": list(topics), **repo}
        entry.setdefault("html_url", f"https://github.com/{full_name}")
        self.starred.insert(0, {"starred_at": when, "repo": entry})


def _star_etag(items: list[dict[str, Any]]) -> str:
    return '"' + hashlib.sha1(json.dumps(items, sort_keys=True).encode()).hexdigest() + '"'


def _blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(
            self, status: int, payload: Any, headers: dict[str, str] | list[tuple[str, str]] | None = None
        ) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items() if isinstance(headers, dict) else headers or []:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            query = {key: values[0] for key, values in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length", "0") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            fake.requests.append(Request(method, path, dict(self.headers.items()), body))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._send(401, {"message": "Bad credentials"})
            repo_prefix = f"/repos/{fake.repository}"
            if path == "/user":
                return self._send(200, {"login": "tester"})
            if path == "/user/starred":
                return self._starred(query)
            if not path.startswith(repo_prefix):
                return self._send(404, {"message": "Not Found"})
            rest = path[len(repo_prefix) :]
            if rest == "":
                return self._send(200, {"full_name": fake.repository, "permissions": {"push": True}})
            if rest.startswith("/branches/"):
                found = rest[len("/branches/") :] in fake.branches
                return self._send(200 if found else 404, {"name": rest} if found else {"message": "Branch not found"})
            if rest == "/commits":
                matching = [
                    c for c in fake.commits if c["path"] == query.get("path") and c["branch"] == query.get("sha")
                ]
                return self._send(200, [{"sha": c["sha"], "html_url": c["html_url"]} for c in reversed(matching)][:1])
            if rest.startswith("/contents/"):
                file_path = rest[len("/contents/") :]
                if method == "GET":
                    branch = query.get("ref", "main")
                    content = fake.files.get((branch, file_path))
                    inside = [p for b, p in fake.files if b == branch and p.startswith(file_path + "/")]
                    if content is None and inside:  # a folder: GitHub lists its entries
                        return self._send(200, [{"type": "file", "path": p} for p in inside])
                    if content is None:
                        return self._send(404, {"message": "Not Found"})
                    return self._send(
                        200,
                        {"type": "file", "sha": _blob_sha(content), "content": base64.b64encode(content).decode()},
                    )
                return self._put(file_path, body or {})
            return self._send(404, {"message": "Not Found"})

        def _starred(self, query: dict[str, str]) -> None:
            behaviour = fake.next_starred.pop(0) if fake.next_starred else "ok"
            if behaviour == "401":
                return self._send(401, {"message": "Bad credentials"})
            if behaviour == "ratelimit":
                headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 120)}
                return self._send(403, {"message": "API rate limit exceeded"}, headers)
            per_page, page = int(query.get("per_page", "30")), int(query.get("page", "1"))
            items = fake.starred[(page - 1) * per_page : page * per_page]
            if self.headers.get("Accept") != "application/vnd.github.star+json":
                items = [item["repo"] for item in items]  # without starred_at, as GitHub does
            etag = _star_etag(items)
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return None
            pages = max(1, -(-len(fake.starred) // per_page))
            links = []
            if page < pages:
                links.append(f'<{fake.url}/user/starred?per_page={per_page}&page={page + 1}>; rel="next"')
                links.append(f'<{fake.url}/user/starred?per_page={per_page}&page={pages}>; rel="last"')
            headers = {"ETag": etag, **({"Link": ", ".join(links)} if links else {})}
            return self._send(200, items, headers)

        def _put(self, file_path: str, body: dict[str, Any]) -> None:
            behaviour = fake.next_put.pop(0) if fake.next_put else "ok"
            if behaviour == "401":
                return self._send(401, {"message": "Bad credentials"})
            if behaviour == "409":
                return self._send(409, {"message": "is at 1234 but expected 5678"})
            if behaviour == "422":
                return self._send(422, {"message": 'Invalid request. "content" wasn\'t supplied.'})
            if behaviour == "ratelimit":
                headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 120)}
                return self._send(403, {"message": "API rate limit exceeded"}, headers)
            if behaviour == "ratelimit-twice":  # the header twice (a proxy's copy beside GitHub's): "4990, 0"
                reset = str(int(time.time()) + 120)
                twice = [("x-ratelimit-remaining", "4990"), ("x-ratelimit-remaining", "0")]
                twice.append(("x-ratelimit-reset", reset))
                return self._send(403, {"message": "API rate limit exceeded"}, twice)
            if behaviour == "secondary":
                return self._send(403, {"message": "You have exceeded a secondary rate limit"}, {"retry-after": "30"})
            if behaviour == "500":
                return self._send(500, {"message": "Server Error"})
            branch = body.get("branch", "main")
            if branch not in fake.branches:
                return self._send(404, {"message": f"Branch {branch} not found"})
            existing = fake.files.get((branch, file_path))
            if existing is not None and body.get("sha") != _blob_sha(existing):
                return self._send(409, {"message": f"{file_path} does not match {body.get('sha')}"})
            content = base64.b64decode(body["content"])
            fake.files[(branch, file_path)] = content
            sha = hashlib.sha1(f"{len(fake.commits)}:{file_path}".encode()).hexdigest()
            commit = {
                "sha": sha,
                "path": file_path,
                "branch": branch,
                "message": body.get("message", ""),
                "html_url": f"https://github.test/{fake.repository}/commit/{sha}",
            }
            fake.commits.append(commit)
            if fake.hold_put:
                fake.hold_put = False
                fake.put_held.set()
                fake.release.wait(30)
            return self._send(
                201, {"content": {"path": file_path}, "commit": {"sha": sha, "html_url": commit["html_url"]}}
            )

        def do_GET(self) -> None:
            self._route("GET")

        def do_PUT(self) -> None:
            self._route("PUT")

    return Handler


@contextmanager
def fake_github_server() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    with serving(_handler(fake)) as port:
        fake.url = f"http://127.0.0.1:{port}"
        try:
            yield fake
        finally:
            fake.release.set()  # a held request lets go before the server stops
