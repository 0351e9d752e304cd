"""A local HTTP server speaking OpenAI's ``/v1/chat/completions`` and ``/v1/embeddings`` on 127.0.0.1,
with scripted misbehaviour (errors, rate limits, malformed or truncated answers, slowness)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from san_desktop.ai.local import LocalProvider
from tests.support.local_http import serving


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeOpenAI:
    """``behaviour`` decides every answer: ok, 400, 401, 403_key (a 403 for a bad key), 403 (a model the key
    may not use), echo_key (a 401 quoting the key back), 429,
    quota (a 429 with ``insufficient_quota``), 500, malformed, length, refusal, slow (held until
    ``release`` is set, then answered as ``behaviour`` says by then), no_schema (json_schema rejected,
    json_object accepted)."""

    behaviour: str = "ok"
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # ends a "slow" answer early
    received: threading.Event = field(default_factory=threading.Event)  # set by every request
    # requests for which this says True are held (until ``release``) after ``held`` is set: a test can
    # kill a client at that moment
    hold: Callable[[str, dict[str, Any]], bool] | None = None
    held: threading.Event = field(default_factory=threading.Event)
    card: dict[str, Any] = field(
        default_factory=lambda: {
            "title": "SQLite WAL",
            "summary": "WAL lets readers work during writes. Checkpoints copy pages back.",
            "tags": ["SQLite", "WAL", "checkpoint"],
            "category": "Databases",
        }
    )
    # the answer to a quiz request ("recall_quizzes"): quizzes as the model would give them
    quizzes: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    local = LocalProvider()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.requests.append(Recorded(self.path, dict(self.headers.items()), body))
            fake.received.set()
            if fake.hold is not None and fake.hold(self.path, body):
                fake.held.set()
                fake.release.wait(30)
                return self._send(503, {"error": {"message": "held and let go"}})
            behaviour = fake.behaviour
            if behaviour == "slow":
                # held until released; then answered as the behaviour set by then (still "slow": an error)
                fake.release.wait(10)
                behaviour = fake.behaviour
                if behaviour == "slow":
                    return self._send(200, {"error": "too late"})
            if behaviour == "401":
                return self._send(
                    401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
                )
            if behaviour == "403_key":  # as some proxies answer a bad key
                return self._send(403, {"error": {"message": "Invalid API key", "code": "invalid_api_key"}})
            if behaviour == "403":  # a key that works, for something it may not do
                return self._send(403, {"error": {"message": "You are not allowed to sample from this model"}})
            if behaviour == "echo_key":  # as some servers do: the key, quoted back in the error
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                return self._send(401, {"error": {"message": f"Incorrect API key provided: {key}"}})
            if behaviour == "400":
                return self._send(400, {"error": {"message": "Invalid model 'gpt-test' for this endpoint"}})
            if behaviour == "quota":
                quota = {"message": "You exceeded your current quota", "code": "insufficient_quota"}
                return self._send(429, {"error": quota})
            if behaviour == "429":
                return self._send(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "7"})
            if behaviour == "500":
                return self._send(500, {"error": {"message": "The server had an error"}})
            if self.path.endswith("/embeddings"):
                vectors = local.embed(body["input"])
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                return self._send(200, {"object": "list", "data": data, "model": body["model"]})
            fmt = (body.get("response_format") or {}).get("type")
            if behaviour == "no_schema" and fmt == "json_schema":
                return self._send(400, {"error": {"message": "response_format json_schema is not supported"}})
            content: str | None = json.dumps(fake.card)
            schema_name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
            if schema_name == "til_section":
                content = json.dumps({"section": "- " + body["messages"][1]["content"].splitlines()[0]})
            elif schema_name == "til_title":
                content = json.dumps({"title": "What the day taught"})
            elif schema_name == "recall_quizzes":
                content = json.dumps({"quizzes": fake.quizzes})
            finish, refusal = "stop", None
            if (
                "refined" in json.dumps(body.get("response_format") or {})
                or "Clean up" in body["messages"][0]["content"]
            ):
                content = json.dumps({"refined": body["messages"][1]["content"].strip()})
            if behaviour == "malformed":
                content = "Sure! Here is your card: {title: SQLite"
            elif behaviour == "length":
                content, finish = '{"title": "SQLite WAL", "summ', "length"
            elif behaviour == "refusal":
                content, refusal = None, "I can't help with that."
            message = {"role": "assistant", "content": content, "refusal": refusal}
            return self._send(200, {"choices": [{"index": 0, "message": message, "finish_reason": finish}]})

    return Handler


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    with serving(_handler(fake)) as port:
        fake.url = f"http://127.0.0.1:{port}/v1"
        try:
            yield fake
        finally:
            fake.release.set()  # a held request lets go before the server stops
