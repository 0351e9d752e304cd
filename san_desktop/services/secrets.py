"""Secrets (API keys, tokens) live in the system keyring: never in the database, settings, logs or error
messages. ``keyrings.alt`` (plain-text files) is deliberately not used. Where the keyring has no backend
(a headless or minimal Linux), secrets come from the environment, as the ``gh`` CLI does (``GH_TOKEN``,
then ``GITHUB_TOKEN``; ``OPENAI_API_KEY``), and are never written anywhere."""

from __future__ import annotations

import logging
import os

from san_desktop.core.errors import KeyringUnavailableError
from san_desktop.core.redact import register_secret
from san_desktop.services.diagnostics import keyring_status

log = logging.getLogger(__name__)

SERVICE = "san-desktop"
AI_API_KEY = "ai-api-key"
GITHUB_TOKEN = "github-token"
# environment variables read (in this order) when the keyring holds no such secret
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    AI_API_KEY: ("OPENAI_API_KEY",),
    GITHUB_TOKEN: ("GH_TOKEN", "GITHUB_TOKEN"),
}


def _require_backend() -> None:
    _name, usable, message = keyring_status()
    if not usable:
        raise KeyringUnavailableError(message)


def get_secret(name: str) -> str | None:
    """The stored secret, or None when there is none (or no keyring to hold one; that is logged)."""
    import keyring  # (imported when a secret is asked for: start-up does not pay for it)
    import keyring.errors

    try:
        _require_backend()
        value = keyring.get_password(SERVICE, name)
    except (KeyringUnavailableError, keyring.errors.KeyringError) as exc:
        log.info("Cannot read %s from the keyring: %s", name, exc)
        return None
    register_secret(value)
    return value


def secret_with_source(name: str) -> tuple[str | None, str]:
    """The secret and where it came from: "keyring", an environment variable's name, or "none"."""
    value = get_secret(name)
    if value:
        return value, "keyring"
    for variable in ENVIRONMENT.get(name, ()):
        if value := os.environ.get(variable, "").strip():
            register_secret(value)
            return value, variable
    return None, "none"


def ai_api_key() -> str | None:
    """The OpenAI-compatible server's API key (what ``ai.factory.ProviderSource`` is handed)."""
    return secret_with_source(AI_API_KEY)[0]


def github_token() -> str | None:
    return secret_with_source(GITHUB_TOKEN)[0]


def set_secret(name: str, value: str) -> None:
    import keyring
    import keyring.errors

    _require_backend()
    try:
        keyring.set_password(SERVICE, name, value)
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailableError(f"the keyring refused to store it: {type(exc).__name__}") from exc
    register_secret(value)


def delete_secret(name: str) -> bool:
    import keyring
    import keyring.errors

    _require_backend()
    try:
        keyring.delete_password(SERVICE, name)
    except keyring.errors.PasswordDeleteError:
        return False
    return True
