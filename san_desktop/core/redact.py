"""Error texts that are safe to store and show: the cause chain, cut to size, without secrets."""

from __future__ import annotations

import re
import threading
import traceback

ERROR_MESSAGE_LIMIT = 1000
REDACTED = "[redacted]"

# Shapes of secrets that may end up inside exception messages (headers, URLs, keys): (pattern, replacement).
_PATTERNS = (
    (re.compile(r"(?i)(authorization\s*[:=]\s*)(?:(?:bearer|token|basic)\s+)?[^\s'\",}]+"), r"\1[redacted]"),
    (re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 [redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "[redacted]"),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})"), "[redacted]"),
    # credentials in a URL: scheme://user:secret@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]+@"), r"\1[redacted]@"),
    (
        re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|client[_-]?secret|password)\s*[=:]\s*)[^\s&'\",}]+"),
        r"\1[redacted]",
    ),
)

_known_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember a secret in use (an API key read from the keyring) so it is scrubbed wherever it shows."""
    if value and len(value) >= 4:
        with _lock:
            _known_secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_known_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def cause_chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (explicit ``raise from`` or implicit context), outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return chain


def describe(exc: BaseException) -> str:
    message = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def error_message(exc: BaseException, limit: int = ERROR_MESSAGE_LIMIT) -> str:
    """``Type: message <- CauseType: message ...``, redacted, at most ``limit`` characters."""
    text = redact(" <- ".join(describe(item) for item in cause_chain(exc)))
    return truncate(text, limit)


# ``PageFetchError: The page was not found.``: the type's name says nothing to a person; the sentence does
_TYPE_NAME = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): (?=\S)")


def without_type_name(error: str) -> str:
    """A recorded error (``error_message``) without the name of the exception that carried it."""
    return _TYPE_NAME.sub("", error)


def first_line(error: str | None) -> str:
    """The failure itself: the first of a recorded cause chain (``A <- B``), its first line."""
    head = (error or "").split(" <- ", 1)[0].strip()
    return head.splitlines()[0] if head else ""


def first_cause(error: str | None) -> str:
    """``first_line`` as a person reads it: without the exception's name."""
    return without_type_name(first_line(error))


def error_details(exc: BaseException) -> str:
    """The full traceback of the chain, redacted (for the attempt record and the log)."""
    return redact("".join(traceback.format_exception(exc)))


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"
