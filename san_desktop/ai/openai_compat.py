"""An OpenAI-compatible HTTP provider (OpenAI, Ollama, LM Studio, llama.cpp, vLLM) over httpx.

Structured output: JSON schema first; when the server does not support it, ``json_object``; then a plain
prompt whose answer is repaired (the first JSON object in it). A truncated answer (``finish_reason ==
"length"``) or a refusal is an error, never a card. HTTP errors are left to the job runner's
classification (429 waits for Retry-After, 5xx and timeouts transient, other 4xx permanent); a rejected key
(401, or a 403 naming the key) is a ``CredentialsRejectedError``, which pauses the AI pool.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import socket
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from san_desktop.ai.base import (
    MAX_TAGS,
    CardDraft,
    KeptParts,
    QuizDraft,
    TilCard,
    TilDraft,
    Vectors,
    assemble_til,
    finalize_draft,
    group_by_topic,
)
from san_desktop.core.credentials import AI_API_KEY, ways_to_set
from san_desktop.core.enums import QuizType
from san_desktop.core.errors import CredentialsRejectedError, KnownError, PermanentError, TransientError

log = logging.getLogger(__name__)

# Cosine distance for "similar" with model embeddings (seed: 0.5).
MODEL_SIMILARITY_THRESHOLD = 0.5
MODES = ("json_schema", "json_object", "prompt")


class AIOutputError(TransientError):
    """The model answered, but not in the shape asked for (a retry may well succeed)."""


class AITruncatedError(PermanentError):
    """The answer was cut off (``finish_reason == "length"``): the same request would be cut again."""


class AIRefusalError(PermanentError):
    """The model refused to answer."""


class AIServerError(KnownError):
    """The server answered with an error status: said in our words (with its own explanation), and
    classified by the answer it carries (``__cause__``, an ``httpx.HTTPStatusError``: 5xx and 429 wait and
    retry, other 4xx fail)."""


@dataclass(frozen=True)
class OpenAISettings:
    base_url: str
    chat_model: str
    embedding_model: str
    api_key: str | None = None
    timeout_seconds: float = 120.0
    connect_timeout_seconds: float = 10.0
    temperature: float = 0.2
    til_cards_per_call: int = 20  # map step of TIL writing: cards per request


CARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "category": {"type": "string"},
    },
    "required": ["title", "summary", "tags", "category"],
    "additionalProperties": False,
}
REFINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"refined": {"type": "string"}},
    "required": ["refined"],
    "additionalProperties": False,
}


def _card_instructions(categories: Sequence[str]) -> str:
    return (
        "You turn a scrap of text someone saved while learning into a knowledge card. Answer in the "
        "scrap's own language (Korean or English). Give: a title (at most 20 characters if Korean, "
        f"otherwise at most 60), a summary of at most 3 short sentences, at most {MAX_TAGS} tags (nouns, "
        f"no '#'), and exactly one category from this list: {', '.join(categories)}. "
        'Reply with JSON only: {"title": ..., "summary": ..., "tags": [...], "category": ...}.'
    )


_REFINE_INSTRUCTIONS = (
    "Clean up this scrap without changing its meaning or language: fix broken line wraps, remove "
    "navigation or advertising leftovers and duplicated lines, keep code blocks exactly. "
    'Reply with JSON only: {"refined": "..."}.'
)


SECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"section": {"type": "string"}},
    "required": ["section"],
    "additionalProperties": False,
}
TITLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
    "additionalProperties": False,
}
_TIL_SECTION_INSTRUCTIONS = (
    "You write one section of a learner's daily 'Today I Learned' note, on the topic {topic}, from the "
    "knowledge cards below. For each card, one or two sentences (or a short bullet list) saying what was "
    "learned, in the cards' own language. Markdown without headings. "
    'Reply with JSON only: {{"section": "..."}}.'
)
_TIL_MERGE_INSTRUCTIONS = (
    "Merge these parts of the '{topic}' section of a 'Today I Learned' note into one section, keeping every "
    "point once, in the same language. Markdown without headings. "
    'Reply with JSON only: {{"section": "..."}}.'
)
_TIL_TITLE_INSTRUCTIONS = (
    "Give a short title (at most 8 words, the learner's language) for a 'Today I Learned' note with these "
    'topics and cards. Reply with JSON only: {"title": "..."}.'
)


QUIZ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "quizzes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "card": {"type": "integer"},
                    "type": {"type": "string", "enum": [quiz_type.value for quiz_type in QuizType]},
                    "question": {"type": "string"},
                    "answer": {"type": "string"},
                    "accepted": {"type": "array", "items": {"type": "string"}},
                    "explanation": {"type": "string"},
                },
                "required": ["card", "type", "question", "answer", "accepted", "explanation"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["quizzes"],
    "additionalProperties": False,
}
_QUIZ_INSTRUCTIONS = (
    "You make recall quizzes from a learner's knowledge cards, in each card's own language. For every card "
    "make one quiz of each of these types: {types}. OX: a statement about the card that is true or false; "
    'answer "O" (true) or "X" (false); a false statement changes one key term of a true one. SHORT_ANSWER: '
    "a question whose answer is a short term written in the card itself (copy it exactly as the card "
    "spells it), with other accepted spellings. Every quiz has a one-sentence explanation. Refer to a card "
    'by its number. Reply with JSON only: {{"quizzes": [{{"card": 1, "type": "OX", "question": "...", '
    '"answer": "O", "accepted": [], "explanation": "..."}}]}}.'
)


def _quiz_draft(item: Any, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> QuizDraft | None:
    if not isinstance(item, dict):
        return None
    number, kind = item.get("card"), item.get("type")
    if not isinstance(number, int) or not 1 <= number <= len(cards) or kind not in [t.value for t in quiz_types]:
        return None
    question, answer = str(item.get("question") or "").strip(), str(item.get("answer") or "").strip()
    if not question or not answer:
        return None
    given = item.get("accepted")
    accepted: list[Any] = given if isinstance(given, list) else []
    return QuizDraft(
        cards[number - 1].card_id,
        QuizType(kind),
        question,
        answer.upper() if kind == QuizType.OX.value else answer,
        tuple(str(option).strip() for option in accepted if str(option).strip()),
        str(item.get("explanation") or "").strip(),
    )


def _section_text(data: dict[str, Any]) -> str:
    section = data.get("section")
    if not isinstance(section, str) or not section.strip():
        raise AIOutputError("The AI answer had no section text")
    return re.sub(r"^#+ .*$", "", section.strip(), flags=re.M).strip()  # headings are the note's own


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer, tolerating code fences and chatter around it."""
    cleaned = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.I)
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        if start < 0 or end <= start:
            raise AIOutputError(f"The AI answer was not valid JSON (no object in it): {text[:200]!r}") from None
        try:
            value = json.loads(cleaned[start : end + 1])
        except json.JSONDecodeError as exc:
            raise AIOutputError(f"The AI answer was not valid JSON: {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise AIOutputError(f"The AI answer was JSON but not an object: {text[:200]!r}")
    return value


class OpenAICompatibleProvider:
    name = "openai"

    def __init__(self, settings: OpenAISettings, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._client = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(settings.timeout_seconds, connect=settings.connect_timeout_seconds),
            transport=transport,
        )
        self._mode_index = 0  # falls back along MODES when the server rejects a response_format
        self._lock = threading.Lock()
        # The sockets of the client's connections, so that ``interrupt`` can cut a call waiting on a slow server:
        # closing the client does not wake a thread blocked reading one (it waited for the server's answer).
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._interrupted = threading.Event()

    @property
    def embedding_model(self) -> str:
        return self.settings.embedding_model

    @property
    def similarity_threshold(self) -> float:
        return MODEL_SIMILARITY_THRESHOLD

    def close(self) -> None:
        self._client.close()

    def interrupt(self) -> None:
        """End the calls under way at once (the app is closing; any thread): each fails as a dropped connection
        does, and every later call fails before it is sent."""
        self._interrupted.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):  # closed already
                sock.shutdown(socket.SHUT_RDWR)

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's (httpcore's) trace of a request: the socket of each new connection is kept for ``interrupt``."""
        if event != "connection.connect_tcp.complete":
            return
        sock = info["return_value"].get_extra_info("socket")
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.add(sock)
        if self._interrupted.is_set():  # (interrupted while this one connected)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    # --- operations ---------------------------------------------------------------------------

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        data = self._structured(_card_instructions(categories), text, "knowledge_card", CARD_SCHEMA)
        try:
            tags = data.get("tags") or []
            draft = CardDraft(
                title=str(data["title"]),
                summary=str(data["summary"]),
                tags=tuple(str(tag) for tag in (tags if isinstance(tags, list) else [tags])),
                category=str(data.get("category", "")),
            )
        except (KeyError, TypeError) as exc:
            raise AIOutputError(f"The AI answer lacks a field of the card: {exc}") from exc
        return finalize_draft(draft, categories)

    def refine_scrap(self, text: str) -> str:
        data = self._structured(_REFINE_INSTRUCTIONS, text, "refined_scrap", REFINE_SCHEMA)
        refined = data.get("refined")
        if not isinstance(refined, str) or not refined.strip():
            raise AIOutputError("The AI answer had no refined text")
        return refined.strip()

    def write_til(self, day: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> TilDraft:
        """Map, then reduce, so a day of many cards never becomes one oversized prompt: one call per batch
        of a topic's cards (``til_cards_per_call``), one per topic with several batches to merge them,
        and one for the title; each answer kept in ``kept``. Code fences come from the cards themselves,
        untouched."""
        sections = []
        groups = group_by_topic(cards)
        for topic, members in groups:
            size = max(1, self.settings.til_cards_per_call)
            batches = [members[start : start + size] for start in range(0, len(members), size)]
            parts = [self._section(topic, batch, kept) for batch in batches]
            body = parts[0] if len(parts) == 1 else self._merge(topic, parts, kept)
            code = [block for card in members for block in card.code_blocks]
            sections.append((topic, "\n\n".join([body, *code])))
        outline = "\n".join(
            f"- {topic}: " + "; ".join(c.title for c in members) for topic, members in group_by_topic(cards)
        )
        title = self._kept(kept, _TIL_TITLE_INSTRUCTIONS, outline, self._title)
        if not title:
            raise AIOutputError("The AI answer had no title for the TIL")
        return TilDraft(title=title, markdown=assemble_til(day, title, sections))

    def _kept(self, kept: KeptParts | None, instructions: str, content: str, ask: Callable[[str, str], str]) -> str:
        """``ask(instructions, content)``, or its answer kept from an earlier run of the same call (the same
        model, instructions and content)."""
        if kept is None:
            return ask(instructions, content)
        key = hashlib.sha256(json.dumps([self.settings.chat_model, instructions, content]).encode()).hexdigest()
        answer = kept.get(key)
        if answer is None:
            answer = ask(instructions, content)
            kept.put(key, answer)
        return answer

    def _section(self, topic: str, cards: Sequence[TilCard], kept: KeptParts | None = None) -> str:
        listing = "\n\n".join(
            f"Card: {card.title}\nSummary: {card.summary}\nTags: {', '.join(card.tags)}" for card in cards
        )
        return self._kept(kept, _TIL_SECTION_INSTRUCTIONS.format(topic=topic), listing, self._section_call)

    def _merge(self, topic: str, parts: Sequence[str], kept: KeptParts | None = None) -> str:
        joined = "\n\n---\n\n".join(parts)
        return self._kept(kept, _TIL_MERGE_INSTRUCTIONS.format(topic=topic), joined, self._section_call)

    def _section_call(self, instructions: str, content: str) -> str:
        return _section_text(self._structured(instructions, content, "til_section", SECTION_SCHEMA))

    def _title(self, instructions: str, outline: str) -> str:
        data = self._structured(instructions, outline, "til_title", TITLE_SCHEMA)
        return " ".join(str(data.get("title") or "").split())[:200]

    def make_quizzes(self, cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
        """One call per batch of ``til_cards_per_call`` cards. Items that name no card of the batch or
        have no text are dropped here; the caller checks the rest against their cards."""
        drafts: list[QuizDraft] = []
        types = ", ".join(quiz_type.value for quiz_type in quiz_types)
        size = max(1, self.settings.til_cards_per_call)
        for start in range(0, len(cards), size):
            batch = cards[start : start + size]
            listing = "\n\n".join(
                f"Card {number}: {card.title}\nSummary: {card.summary}\nTags: {', '.join(card.tags)}"
                for number, card in enumerate(batch, start=1)
            )
            data = self._structured(_QUIZ_INSTRUCTIONS.format(types=types), listing, "recall_quizzes", QUIZ_SCHEMA)
            items = data.get("quizzes")
            if not isinstance(items, list):
                raise AIOutputError("The AI answer had no list of quizzes")
            for item in items:
                draft = _quiz_draft(item, batch, quiz_types)
                if draft is not None:
                    drafts.append(draft)
        return drafts

    def embed(self, texts: Sequence[str]) -> Vectors:
        response = self._post("embeddings", {"model": self.settings.embedding_model, "input": list(texts)})
        self._raise_for_status(response)
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise AIOutputError("The embeddings answer was not in the OpenAI format") from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise AIOutputError(f"Asked for {len(texts)} embeddings, got {matrix.shape[0] if matrix.ndim else 0}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalized: Vectors = (matrix / norms).astype(np.float32)
        return normalized

    def test_connection(self) -> str:
        """A short description of what answered, or an exception saying what failed."""
        vector = self.embed(["connection test"])
        draft = self.analyze_card("SQLite is an embedded SQL database engine.", ["Databases", "Other"])
        return (
            f"Chat model {self.settings.chat_model} answered ({draft.title!r}); embedding model "
            f"{self.settings.embedding_model} gives {vector.shape[1]} dimensions."
        )

    # --- chat with structured output ----------------------------------------------------------

    def _structured(self, instructions: str, text: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        while True:
            with self._lock:
                mode = MODES[self._mode_index]
            response = self._chat(instructions, text, mode, name, schema)
            if response.status_code == 400 and mode != "prompt" and _rejects_response_format(response):
                with self._lock:
                    if MODES[self._mode_index] == mode:
                        self._mode_index += 1
                        log.info(
                            "%s does not accept %s output; falling back to %s",
                            self.settings.base_url,
                            mode,
                            MODES[self._mode_index],
                        )
                continue
            self._raise_for_status(response)
            return self._parse_chat(response)

    def _chat(self, instructions: str, text: str, mode: str, name: str, schema: dict[str, Any]) -> httpx.Response:
        body: dict[str, Any] = {
            "model": self.settings.chat_model,
            "temperature": self.settings.temperature,
            "messages": [
                {"role": "system", "content": instructions},
                {"role": "user", "content": text},
            ],
        }
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return self._post("chat/completions", body)

    def _post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST that names the address and the limit when the server is too slow to answer."""
        if self._interrupted.is_set():
            raise TransientError(
                f"The call to the AI server at {self._client.base_url}{path} was stopped: the app is closing"
            )
        try:
            return self._client.post(path, json=body, extensions={"trace": self._trace})
        except httpx.TimeoutException as exc:
            limit = self.settings.connect_timeout_seconds if isinstance(exc, httpx.ConnectTimeout) else None
            limit = limit or self.settings.timeout_seconds
            raise TransientError(
                f"No answer from {self._client.base_url}{path} within {limit:g} s "
                "(raise ai.timeout_seconds for slow local models)"
            ) from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:  # refused, reset, closed mid-answer
            raise TransientError(f"Cannot reach the AI server at {self._client.base_url}{path}: {exc}") from exc

    def _raise_for_status(self, response: httpx.Response) -> None:
        _raise_for_status(response, has_key=bool(self.settings.api_key))

    @staticmethod
    def _parse_chat(response: httpx.Response) -> dict[str, Any]:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise AIOutputError(f"The chat answer was not in the OpenAI format: {response.text[:200]!r}") from exc
        if choice.get("finish_reason") == "length":
            raise AITruncatedError(
                "The AI answer was cut off (finish_reason=length): raise the model's output limit or "
                "scrap a shorter text"
            )
        if message.get("refusal"):
            raise AIRefusalError(f"The AI refused: {str(message['refusal'])[:200]}")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise AIOutputError("The AI answer was empty")
        return extract_json_object(content)


def _error_detail(response: httpx.Response) -> tuple[str, str]:
    """(message, code) of an OpenAI-style error body, or the start of whatever the body is."""
    try:
        payload = response.json()
    except ValueError:
        return " ".join(response.text.split())[:300], ""
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or "")[:300], str(error.get("code") or error.get("type") or "")
    if isinstance(error, str):
        return error[:300], ""
    return " ".join(response.text.split())[:300], ""


_KEY_WORDS = re.compile(r"api[ _-]?key|\bkey\b|unauthori[sz]ed|authenticat", re.I)


def _raise_for_status(response: httpx.Response, *, has_key: bool = True) -> None:
    """Like ``raise_for_status``, as our own error with the server's explanation in the message (the job
    layer still classifies by the status and headers of the cause). An exhausted quota is a 429 that
    waiting does not end; a rejected key (401, or a 403 whose explanation names the key) is said as such,
    in words of our own (some servers quote the key back)."""
    if response.is_success:
        return
    message, code = _error_detail(response)
    request = response.request
    summary = f"HTTP {response.status_code} {response.reason_phrase} from {request.url}"
    if message:
        summary += f": {message}"
    # the cause keeps the server's own words where ours leave them out (they may quote the key back)
    error = httpx.HTTPStatusError(summary, request=request, response=response)
    status = response.status_code
    if status == 401 or (status == 403 and _KEY_WORDS.search(f"{code} {message}")):
        if not has_key:
            raise CredentialsRejectedError(
                f"The AI server asks for an API key ({status}): {ways_to_set(AI_API_KEY)}"
            ) from error
        raise CredentialsRejectedError(
            f"The AI server rejected the API key ({status}): for a valid one, {ways_to_set(AI_API_KEY)}"
        ) from error
    if response.status_code == 429 and code == "insufficient_quota":
        raise PermanentError(
            "The AI account's quota is exhausted (insufficient_quota): add credit or change the AI settings"
        ) from error
    raise AIServerError(summary) from httpx.HTTPStatusError(
        f"{status} {response.reason_phrase}", request=request, response=response
    )


def _rejects_response_format(response: httpx.Response) -> bool:
    text = response.text.lower()
    return "response_format" in text or "json_schema" in text or "json_object" in text
