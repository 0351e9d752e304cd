from __future__ import annotations

from san_desktop.core.redact import ERROR_MESSAGE_LIMIT, error_details, error_message, redact, register_secret


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
