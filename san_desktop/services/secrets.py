"""Secrets (API keys, tokens) live in the system keyring: never in the database, settings, logs or error
messages. ``keyrings.alt`` (plain-text files) is deliberately not used. Where the keyring has no backend
(a headless or minimal Linux) or fails, secrets come from the environment, as the ``gh`` CLI does
(``GH_TOKEN``, then ``GITHUB_TOKEN``; ``OPENAI_API_KEY``), and are never written anywhere
(``core.credentials`` says which ways work here). A keyring that fails is logged once and not asked again
by this process until a secret is stored."""

from __future__ import annotations

import logging
import os

from san_desktop.core.credentials import (
    AI_API_KEY,
    DATABASE_PASSWORD,
    ENVIRONMENT,
    GITHUB_TOKEN,
    environment_phrase,
    forget_keyring_failure,
    keyring_status,
    note_keyring_failure,
    secret_title,
    ways_to_set,
)
from san_desktop.core.errors import KeyringUnavailableError
from san_desktop.core.redact import register_secret

__all__ = [
    "AI_API_KEY",
    "DATABASE_PASSWORD",
    "GITHUB_TOKEN",
    "SERVICE",
    "ai_api_key",
    "database_password",
    "delete_secret",
    "get_secret",
    "github_token",
    "secret_with_source",
    "set_secret",
    "ways_to_set",
]

log = logging.getLogger(__name__)

SERVICE = "san-desktop"
_VARIABLES = ", ".join(variable for names in ENVIRONMENT.values() for variable in names)
_told_unusable = False  # that there is no keyring at all, said once a process (secrets are read every poll)


def _keyring_failed(name: str, exc: BaseException) -> None:
    """Say once that the keyring failed, with what works instead; later reads do not ask it again."""
    global _told_unusable
    _told_unusable = True  # (this says it)
    problem = f"the keyring failed: {exc}" if str(exc).strip() else "the keyring failed"
    if note_keyring_failure(problem):
        log.warning("Cannot read %s from the keyring (%s); secrets come from %s only", name, problem, _VARIABLES)


def get_secret(name: str) -> str | None:
    """The stored secret, or None when there is none (or no keyring to hold one)."""
    global _told_unusable
    _backend, usable, message = keyring_status()
    if not usable:
        if not _told_unusable:
            _told_unusable = True
            log.info("No usable keyring (%s): secrets come from %s only", message, _VARIABLES)
        return None
    import keyring  # (imported when a secret is asked for: start-up does not pay for it)
    import keyring.errors

    try:
        value = keyring.get_password(SERVICE, name)
    except (keyring.errors.KeyringError, OSError) as exc:
        _keyring_failed(name, exc)
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


def database_password() -> str | None:
    """The PostgreSQL server's password, from the keyring or PGPASSWORD (None: libpq looks in ~/.pgpass)."""
    return secret_with_source(DATABASE_PASSWORD)[0]


def _require_backend(name: str, done: str) -> None:
    _backend, usable, message = keyring_status(after_failure=False)
    if not usable:
        raise KeyringUnavailableError(secret_title(name), message, environment_phrase(name), done=done)


def set_secret(name: str, value: str) -> None:
    """Store ``value`` in the keyring; ``KeyringUnavailableError`` names the environment variable to use
    instead when there is no keyring, or it refuses."""
    import keyring
    import keyring.errors

    _require_backend(name, "stored")
    try:
        keyring.set_password(SERVICE, name, value)
    except (keyring.errors.KeyringError, OSError) as exc:
        note_keyring_failure(f"the keyring refused to store it: {exc}")
        log.warning("The keyring refused to store %s: %s", name, exc)
        raise KeyringUnavailableError(secret_title(name), f"it refused: {exc}", environment_phrase(name)) from exc
    forget_keyring_failure()  # it answered: reads may ask it again
    register_secret(value)


def delete_secret(name: str) -> bool:
    import keyring
    import keyring.errors

    _require_backend(name, "removed")
    try:
        keyring.delete_password(SERVICE, name)
    except keyring.errors.PasswordDeleteError:
        return False
    except (keyring.errors.KeyringError, OSError) as exc:
        raise KeyringUnavailableError(
            secret_title(name), f"it refused: {exc}", environment_phrase(name), done="removed"
        ) from exc
    return True
