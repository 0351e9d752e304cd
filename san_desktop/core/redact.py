"""Error texts that are safe to store and show: the cause chain, cut to size, without secrets."""

from __future__ import annotations

import re
import threading
import traceback

from san_desktop.core.errors import KnownError

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
    """One link of a recorded chain: an error of ours by the sentence it carries; any other exception by
    its type and message, which is what a bug report needs."""
    message = str(exc).strip()
    if message and isinstance(exc, KnownError):
        return message
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def error_message(exc: BaseException, limit: int = ERROR_MESSAGE_LIMIT) -> str:
    """``Sentence <- ForeignType: message ...``, outermost first, redacted, at most ``limit`` characters."""
    text = redact(CHAIN_SEPARATOR.join(describe(item) for item in cause_chain(exc)))
    return truncate(text, limit)


CHAIN_SEPARATOR = " <- "
UNEXPECTED = "An unexpected error (the log has its details)"
# the name of the exception that carried a message, as ``describe`` and tracebacks write it (dotted or not):
# ``HTTPStatusError: …``, ``httpx.ReadTimeout: …``, ``OSError: …``. A sentence's own colon ("Note: …",
# "GitHub answered 404 to …: Not Found") stays: a single capitalised word is a name only with a suffix
# exceptions have.
_TYPE_NAME = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*"
    r"(?:[A-Z][a-z0-9]*[A-Z]\w*|[A-Z]\w*(?:Error|Exception|Warning|Timeout|Exit|Interrupt|Iteration))"
    r"(?::\s+|$)"
)


def without_type_name(part: str) -> str:
    """One link of a recorded chain (or a traceback's last line) without the exception's name."""
    return _TYPE_NAME.sub("", part.strip(), count=1)


def readable_parts(error: str | None) -> list[str]:
    """Every link of a recorded chain as a person reads it: no exception names; a link that was only a
    name (an exception without a message), or that the link before it already says, is left out."""
    parts: list[str] = []
    for part in (error or "").split(CHAIN_SEPARATOR):
        text = without_type_name(part)
        if text and not (parts and text in parts[-1]):
            parts.append(text)
    return parts


def readable(error: str | None, separator: str = " \u2190 ") -> str:
    """A whole recorded chain as a person reads it (a tooltip, a detail): each link without exception
    names, outermost first, joined by ``separator`` (an arrow pointing to what came first)."""
    return separator.join(readable_parts(error)) or first_cause(error)


def first_cause(error: str | None) -> str:
    """The failure itself, as a person reads it: the first link of a recorded chain, its first line,
    without the exception's name (an exception with nothing but a name reads as ``UNEXPECTED``)."""
    head = (error or "").split(CHAIN_SEPARATOR, 1)[0].strip()
    if not head:
        return ""
    readable = without_type_name(head.splitlines()[0])
    return readable or UNEXPECTED


def traceback_cause(details: str) -> str:
    """What a recorded traceback (``error_details``) says, as a person reads it: its last line (the
    outermost exception), without the exception's name."""
    lines = details.strip().splitlines()
    return first_cause(lines[-1]) if lines else ""


def error_details(exc: BaseException) -> str:
    """The full traceback of the chain, redacted (for the attempt record and the log)."""
    return redact("".join(traceback.format_exception(exc)))


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"
