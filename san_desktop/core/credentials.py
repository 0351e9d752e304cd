"""Where each secret can come from on this machine, said once for every message that asks for one.

Secrets live in the system keyring when one is usable; otherwise they come from the environment, as the
``gh`` CLI reads them (``GH_TOKEN``, then ``GITHUB_TOKEN``; ``OPENAI_API_KEY``), and are never written to a
file. A keyring that exists but fails (locked, its service gone) counts as unusable from its first failure
on: ``note_keyring_failure`` remembers it for this process, so it is reported once and every later message
names the environment instead of a keyring that will not answer.
"""

from __future__ import annotations

import threading

AI_API_KEY = "ai-api-key"
GITHUB_TOKEN = "github-token"
CAPTURE_TOKEN = "capture-token"  # the browser extension's, made by the app (``services.capture_token``)
DATABASE_PASSWORD = "database-password"  # of the PostgreSQL server in ``database.url`` (libpq also reads ~/.pgpass)
# environment variables read (in this order) when the keyring holds no such secret
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    AI_API_KEY: ("OPENAI_API_KEY",),
    GITHUB_TOKEN: ("GH_TOKEN", "GITHUB_TOKEN"),
    CAPTURE_TOKEN: ("SAN_CAPTURE_TOKEN",),
    DATABASE_PASSWORD: ("PGPASSWORD",),
}
_WHAT = {
    AI_API_KEY: "the API key",
    GITHUB_TOKEN: "the GitHub token",
    CAPTURE_TOKEN: "the browser capture token",
    DATABASE_PASSWORD: "the database password",
}
_COMMANDS = {
    AI_API_KEY: "`san config set ai.api_key`",
    GITHUB_TOKEN: "`san github token set`",
    CAPTURE_TOKEN: "Settings → Browser (Regenerate)",
    DATABASE_PASSWORD: "`san config set database.password`",
}

_lock = threading.Lock()
_failure: str | None = None  # the first failure of a keyring that looked usable, in this process


def keyring_status(*, after_failure: bool = True) -> tuple[str, bool, str]:
    """(backend name, usable, message) — usable means secrets can be stored somewhere safe. A keyring
    that failed in this process counts as unusable, unless not ``after_failure`` (storing a secret asks it
    again: the user may have unlocked it meanwhile)."""
    import keyring  # here, not at start-up: a command line call that asks for no secret need not load it
    import keyring.backends.fail

    try:
        backend = keyring.get_keyring()
    except Exception as exc:
        return ("none", False, f"the keyring could not be loaded ({exc})")
    name = f"{type(backend).__module__}.{type(backend).__qualname__}"
    if isinstance(backend, keyring.backends.fail.Keyring):
        return (name, False, "no keyring backend is available on this system")
    if "keyrings.alt" in name:
        return (name, False, "the keyrings.alt backend stores secrets in plain text and is not used")
    with _lock:
        failure = _failure if after_failure else None
    if failure is not None:
        return (name, False, failure)
    return (name, True, "ok")


def note_keyring_failure(problem: str) -> bool:
    """Remember that the keyring failed (``problem``, a phrase); True the first time, so it is told once."""
    global _failure
    with _lock:
        first = _failure is None
        if first:
            _failure = problem
    return first


def forget_keyring_failure() -> None:
    """The keyring answered again (or a test starts afresh)."""
    global _failure
    with _lock:
        _failure = None


def secret_title(name: str) -> str:
    """``The GitHub token``, ``The API key``: how a sentence about the secret ``name`` starts."""
    return _WHAT[name][0].upper() + _WHAT[name][1:]


def environment_phrase(name: str) -> str:
    """``GH_TOKEN (or GITHUB_TOKEN)``, ``OPENAI_API_KEY``."""
    first, *others = ENVIRONMENT[name]
    return first + (f" (or {' or '.join(others)})" if others else "")


def ways_to_set(name: str) -> str:
    """Every way to give SAN Desktop the secret ``name`` that works here, as the end of a sentence
    ("No GitHub token: enter it in Settings …")."""
    variables = environment_phrase(name)
    _backend, usable, problem = keyring_status()
    if usable:
        return f"enter it in Settings or with {_COMMANDS[name]} (kept in the keyring), or set {variables}"
    return f"set {variables} in SAN Desktop's environment (no usable keyring here: {problem})"
