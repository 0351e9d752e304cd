from __future__ import annotations

import pytest

from san_desktop.core.errors import SanError, TransientError
from san_desktop.core.redact import (
    ERROR_MESSAGE_LIMIT,
    UNEXPECTED,
    error_details,
    error_message,
    first_cause,
    readable_parts,
    redact,
    register_secret,
)
from san_desktop.web.errors import PageFetchError


def _chained() -> Exception:
    try:
        try:
            raise ConnectionRefusedError("connect to 127.0.0.1:9 refused")
        except ConnectionRefusedError as inner:
            raise TimeoutError("AI server did not answer") from inner
    except TimeoutError as middle:
        try:
            raise RuntimeError("card analysis failed") from middle
        except RuntimeError as outer:
            return outer


def test_error_message_names_each_cause_outermost_first() -> None:
    assert error_message(_chained()) == (
        "RuntimeError: card analysis failed <- TimeoutError: AI server did not answer "
        "<- ConnectionRefusedError: connect to 127.0.0.1:9 refused"
    )


def test_error_message_is_cut_to_the_limit() -> None:
    message = error_message(ValueError("x" * 5000))
    assert len(message) == ERROR_MESSAGE_LIMIT
    assert message.startswith("ValueError: xxx")
    assert message.endswith("…")


def test_secret_shapes_are_redacted() -> None:
    text = redact(
        "401 for Authorization: Bearer sk-proj-abcdefghijklmnop; url ?api_key=hunter2hunter2&x=1 "
        "token ghp_0123456789abcdefghijABCDEFGHIJ github_pat_11ABCDEFG0123456789_abcdefghijklmnop"
    )
    for secret in ("sk-proj-abcdefghijklmnop", "hunter2hunter2", "ghp_0123456789", "github_pat_11ABC"):
        assert secret not in text
    assert "Authorization: [redacted]" in text
    assert "api_key=[redacted]" in text
    assert "&x=1" in text  # what is not secret stays readable


def test_registered_secrets_are_redacted_in_messages_and_tracebacks() -> None:
    register_secret("plain-looking-key-42")
    try:
        raise OSError("server said: key plain-looking-key-42 is invalid")
    except OSError as exc:
        assert "plain-looking-key-42" not in error_message(exc)
        details = error_details(exc)
    assert "plain-looking-key-42" not in details
    assert "Traceback" in details


# --- what is recorded, and what a person reads (issue 24: no exception class names) ---------------


def _ours_over_foreign() -> Exception:
    try:
        try:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        except ConnectionRefusedError as inner:
            raise TransientError("Cannot reach http://127.0.0.1:9/v1 (embed the cards)") from inner
    except TransientError as outer:
        return outer


def test_our_errors_are_recorded_by_their_sentence_and_foreign_causes_by_type() -> None:
    assert error_message(PageFetchError("The page was not found (HTTP 404).")) == "The page was not found (HTTP 404)."
    assert error_message(_ours_over_foreign()) == (
        "Cannot reach http://127.0.0.1:9/v1 (embed the cards) <- ConnectionRefusedError: [Errno 111] Connection refused"
    )
    assert error_message(SanError("No GitHub token.")) == "No GitHub token."
    assert error_message(RuntimeError("boom")) == "RuntimeError: boom"  # a bug: its type helps the report


@pytest.mark.parametrize(
    ("recorded", "read"),
    [
        ("The page was not found (HTTP 404).", "The page was not found (HTTP 404)."),
        ("PageFetchError: The page was not found (HTTP 404).", "The page was not found (HTTP 404)."),  # older
        (
            "HTTPStatusError: HTTP 500 Internal Server Error from http://h/v1",
            "HTTP 500 Internal Server Error from http://h/v1",
        ),
        ("httpx.ReadTimeout: timed out", "timed out"),
        ("san_desktop.web.errors.PageFetchError: gone", "gone"),
        ("KeyringLocked: the daemon is locked", "the daemon is locked"),
        ("Cannot reach X <- ConnectError: refused", "Cannot reach X"),
        ("TimeoutError", UNEXPECTED),
        ("GitHub answered 404 to read me/til: Not Found", "GitHub answered 404 to read me/til: Not Found"),
        ("Note: the folder is read-only", "Note: the folder is read-only"),  # a sentence's own colon stays
        ("", ""),
    ],
)
def test_a_person_reads_the_first_failure_without_class_names(recorded: str, read: str) -> None:
    assert first_cause(recorded) == read


def test_a_person_reads_every_cause_without_class_names() -> None:
    recorded = error_message(_ours_over_foreign())
    assert readable_parts(recorded) == [
        "Cannot reach http://127.0.0.1:9/v1 (embed the cards)",
        "[Errno 111] Connection refused",
    ]
