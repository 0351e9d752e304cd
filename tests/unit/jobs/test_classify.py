from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest

from san_desktop.core.enums import ErrorKind
from san_desktop.core.errors import PermanentError, RateLimitedError, TargetNotFoundError, TransientError
from san_desktop.jobs.classify import classify, rate_limit_wait

NOW = 1_800_000_000.0


def _status_error(status: int, headers: dict[str, str] | list[tuple[str, str]] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request)
    return httpx.HTTPStatusError(f"HTTP {status}", request=request, response=response)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_permanent(status: int) -> None:
    assert classify(_status_error(status), now=NOW).kind is ErrorKind.PERMANENT


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
def test_server_errors_and_timeouts_are_transient(status: int) -> None:
    found = classify(_status_error(status), now=NOW)
    assert found.kind is ErrorKind.TRANSIENT
    assert not found.rate_limited


def test_429_waits_for_retry_after_seconds() -> None:
    found = classify(_status_error(429, {"Retry-After": "17"}), now=NOW)
    assert found.kind is ErrorKind.TRANSIENT
    assert found.retry_after == 17


def test_429_with_an_http_date() -> None:
    when = format_datetime(datetime.fromtimestamp(NOW + 90, UTC), usegmt=True)
    assert classify(_status_error(429, {"Retry-After": when}), now=NOW).retry_after == pytest.approx(90)


def test_github_rate_limit_reset_on_403() -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 300)}
    found = classify(_status_error(403, headers), now=NOW)
    assert found.retry_after == pytest.approx(300)


def test_a_rate_limit_header_sent_twice_still_says_used_up() -> None:
    """GitHub's own header beside a proxy's copy: joined, they read "4990, 0" (issue 23, item 18)."""
    headers = [("x-ratelimit-remaining", "4990"), ("x-ratelimit-remaining", "0")]
    headers += [("x-ratelimit-reset", str(int(NOW) + 300)), ("x-ratelimit-reset", "not a time")]
    found = classify(_status_error(403, headers), now=NOW)
    assert found.kind is ErrorKind.TRANSIENT
    assert found.retry_after == pytest.approx(300)


def test_retry_after_sent_twice_waits_the_longer() -> None:
    found = classify(_status_error(429, [("Retry-After", "5"), ("Retry-After", "40")]), now=NOW)
    assert found.retry_after == 40
    durations = [("x-ratelimit-reset-requests", "1s"), ("x-ratelimit-reset-requests", "6m0s")]
    assert classify(_status_error(429, durations), now=NOW).retry_after == 360


def test_openai_reset_durations() -> None:
    assert rate_limit_wait({"x-ratelimit-reset-requests": "6m0s"}, now=NOW) == 360
    assert rate_limit_wait({"x-ratelimit-reset-tokens": "20ms"}, now=NOW) == pytest.approx(0.02)
    assert rate_limit_wait({"x-ratelimit-reset-tokens": "soon"}, now=NOW) is None


def test_network_failures_are_transient() -> None:
    request = httpx.Request("GET", "http://127.0.0.1:9/")
    assert classify(httpx.ConnectError("refused", request=request)).kind is ErrorKind.TRANSIENT
    assert classify(httpx.ReadTimeout("slow", request=request)).kind is ErrorKind.TRANSIENT
    assert classify(TimeoutError()).kind is ErrorKind.TRANSIENT
    assert classify(ConnectionResetError()).kind is ErrorKind.TRANSIENT


def test_causes_are_looked_through() -> None:
    try:
        try:
            raise TimeoutError("read timed out")
        except TimeoutError as inner:
            raise RuntimeError("analysis step failed") from inner
    except RuntimeError as exc:
        assert classify(exc).kind is ErrorKind.TRANSIENT


def test_explicit_classes_and_unknown_errors() -> None:
    assert classify(TransientError("x")).kind is ErrorKind.TRANSIENT
    assert classify(PermanentError("x")).kind is ErrorKind.PERMANENT
    assert classify(RateLimitedError("x", 5)).retry_after == 5
    assert classify(KeyError("bug")).kind is ErrorKind.PERMANENT
    assert str(TargetNotFoundError()) == "Target data not found (Already deleted)"
