"""The token the browser extension sends with every request to the app's capture endpoint: made by the app
(random, 256 bits), kept in the keyring, or where there is none in a file of the data folder that only its
owner can read (``SAN_CAPTURE_TOKEN`` overrides both). Regenerating it unpairs every extension given the old
one."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from san_desktop.core.credentials import CAPTURE_TOKEN
from san_desktop.core.errors import KeyringUnavailableError
from san_desktop.core.redact import register_secret
from san_desktop.services.secrets import secret_with_source, set_secret

log = logging.getLogger(__name__)

TOKEN_FILE = "capture-token"  # in the data folder, mode 0600, when there is no keyring


def capture_token(data_dir: Path) -> str:
    """The token, made on first use."""
    value, _source = secret_with_source(CAPTURE_TOKEN)
    if value:
        return value
    stored = _read_file(data_dir)
    return stored if stored else regenerate_capture_token(data_dir)


def regenerate_capture_token(data_dir: Path) -> str:
    """A new token in place of the old one (extensions paired with the old one are refused from now on)."""
    value = secrets.token_urlsafe(32)
    try:
        set_secret(CAPTURE_TOKEN, value)
    except KeyringUnavailableError as exc:
        log.info("The browser capture token goes in a file of the data folder: %s", exc)
        _write_file(data_dir, value)
    else:
        (data_dir / TOKEN_FILE).unlink(missing_ok=True)  # a keyring now: no copy left in a file
    register_secret(value)
    return value


def _read_file(data_dir: Path) -> str | None:
    try:
        value = (data_dir / TOKEN_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    register_secret(value)
    return value or None


def _write_file(data_dir: Path, value: str) -> None:
    path = data_dir / TOKEN_FILE
    path.unlink(missing_ok=True)  # (created afresh, so its mode is the one given here)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(value)
