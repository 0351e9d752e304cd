"""The browser capture token: made once and kept (the keyring, else a file only its owner can read), made
anew by Regenerate, never written to settings or the database."""

from __future__ import annotations

import stat
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from san_desktop.core.credentials import CAPTURE_TOKEN
from san_desktop.services.capture_token import TOKEN_FILE, capture_token, regenerate_capture_token
from san_desktop.services.secrets import SERVICE
from tests.support.failing_keyring import FailingKeyring


def test_the_token_is_made_once_kept_in_the_keyring_and_made_anew_on_request(tmp_path: Path) -> None:
    token = capture_token(tmp_path)
    assert len(token) >= 40
    assert capture_token(tmp_path) == token
    assert keyring.get_password(SERVICE, CAPTURE_TOKEN) == token
    assert not (tmp_path / TOKEN_FILE).exists()
    new = regenerate_capture_token(tmp_path)
    assert new != token
    assert capture_token(tmp_path) == new


@pytest.mark.parametrize("backend", [FailingKeyring, keyring.backends.fail.Keyring])
def test_without_a_keyring_the_token_is_in_a_file_only_its_owner_reads(
    tmp_path: Path, backend: type[keyring.backend.KeyringBackend]
) -> None:
    keyring.set_keyring(backend())  # (the autouse fixture puts the memory keyring back)
    token = capture_token(tmp_path)
    path = tmp_path / TOKEN_FILE
    assert path.read_text(encoding="utf-8") == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert capture_token(tmp_path) == token  # read back, not made again
    new = regenerate_capture_token(tmp_path)
    assert path.read_text(encoding="utf-8") == new
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAN_CAPTURE_TOKEN", "from-the-environment-0123456789")
    assert capture_token(tmp_path) == "from-the-environment-0123456789"
