"""How a job's failure is classified: transient (retry with backoff), rate limited (wait without
spending an attempt) or permanent (fail at once). DESIGN.md §3.

The error classes themselves live in ``core.errors`` so adapters raise them without importing this layer;
the queue records what this module decides."""

from __future__ import annotations

import re
import sys
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from san_desktop.core.enums import ErrorKind
from san_desktop.core.errors import (
    CredentialsRejectedError,
    DatabaseLockedError,
    PermanentError,
    RateLimitedError,
    SanError,
    TransientError,
    is_storage_full,
)
from san_desktop.core.headers import header_numbers, header_pieces, limit_used_up
from san_desktop.core.redact import cause_chain
from san_desktop.core.sqlite_codes import is_locked
from san_desktop.queue.records import Classification

if TYPE_CHECKING:
    import httpx

TRANSIENT = Classification(ErrorKind.TRANSIENT)
PERMANENT = Classification(ErrorKind.PERMANENT)

STORAGE_FULL_WAIT_SECONDS = 60.0
_TRANSIENT_STATUS = {408, 425, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529}


def classify(exc: BaseException, *, now: float | None = None) -> Classification:
    """Look through the cause chain, outermost first, for the first exception that says what it is."""
    for item in cause_chain(exc):
        found = _classify_one(item, now if now is not None else time.time())
        if found is not None:
            return found
    return PERMANENT  # an unknown error is a bug or bad data: retrying blindly would only repeat it


def credentials_rejected(exc: BaseException) -> CredentialsRejectedError | None:
    """The rejected key in ``exc``'s cause chain, if that is what it says: a pool with a breaker pauses on
    it (``CircuitBreaker.hold``) instead of failing its jobs one by one."""
    return next((item for item in cause_chain(exc) if isinstance(item, CredentialsRejectedError)), None)


def _classify_one(exc: BaseException, now: float) -> Classification | None:
    if isinstance(exc, RateLimitedError):
        return Classification(ErrorKind.TRANSIENT, exc.retry_after)
    if is_storage_full(exc):
        # not the job's fault and gone once space is freed: wait and look again, spending no attempt
        return Classification(ErrorKind.TRANSIENT, STORAGE_FULL_WAIT_SECONDS)
    if isinstance(exc, TransientError | DatabaseLockedError):
        return TRANSIENT  # a lock held elsewhere goes away: try again later
    if isinstance(exc, PermanentError | SanError):
        return PERMANENT
    if (found := _classify_http(exc, now)) is not None:
        return found
    if isinstance(exc, TimeoutError | ConnectionError):
        return TRANSIENT
    if is_locked(exc):
        return TRANSIENT  # (either driver's error, or SQLAlchemy's wrapper of it)
    return None


def _classify_http(exc: BaseException, now: float) -> Classification | None:
    # httpx is looked up, not imported: an httpx error cannot exist before some adapter imported it, and
    # importing it here (with its command line's rich and click) was a twentieth of the window's start
    httpx = sys.modules.get("httpx")
    if httpx is None:
        return None
    if isinstance(exc, httpx.HTTPStatusError):
        return classify_response(exc.response, now=now)
    if isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        return TRANSIENT
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return PERMANENT
    return None


def classify_response(response: httpx.Response, *, now: float | None = None) -> Classification:
    """401/403/404 and other 4xx: permanent; 429 (or 403 with an exhausted rate limit): wait; 5xx: transient."""
    status = response.status_code
    wait = rate_limit_wait(response.headers, now=now if now is not None else time.time())
    if status == 429 or (status == 403 and limit_used_up(response.headers.get("x-ratelimit-remaining"))):
        return Classification(ErrorKind.TRANSIENT, wait if wait is not None else 60.0)
    if status in _TRANSIENT_STATUS or status >= 500:
        return Classification(ErrorKind.TRANSIENT, wait) if wait is not None else TRANSIENT
    return PERMANENT


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def _parse_duration(value: str) -> float | None:
    """OpenAI's reset headers: ``1s``, ``6m0s``, ``20ms``."""
    parts = _DURATION.findall(value.strip())
    if not parts or "".join(n + u for n, u in parts) != value.strip():
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(number) * scale[unit] for number, unit in parts)


def rate_limit_wait(headers: httpx.Headers | dict[str, str], *, now: float) -> float | None:
    """Seconds to wait, from Retry-After (seconds or HTTP date), GitHub's x-ratelimit-reset (epoch
    seconds, when the remaining count is 0) or OpenAI's x-ratelimit-reset-* durations."""
    lowered = {key.lower(): value for key, value in headers.items()}  # (a header sent twice: "a, b")
    retry_after = lowered.get("retry-after")
    if retry_after:
        if seconds := header_numbers(retry_after):
            return max(seconds)
        try:
            return max(0.0, parsedate_to_datetime(retry_after).timestamp() - now)
        except (TypeError, ValueError):
            pass
    resets = header_numbers(lowered.get("x-ratelimit-reset"))
    if limit_used_up(lowered.get("x-ratelimit-remaining")) and resets:
        return max(0.0, max(resets) - now)
    waits = [
        parsed
        for key in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
        for piece in header_pieces(lowered.get(key))
        if (parsed := _parse_duration(piece)) is not None
    ]
    return max(waits) if waits else None
