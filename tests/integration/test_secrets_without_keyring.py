"""Secrets without a keyring (issue 24, item 3): a machine with no keyring backend, or one whose keyring
fails every call, is told the way that works there (GH_TOKEN / GITHUB_TOKEN, OPENAI_API_KEY), and the
failing keyring is logged once, not on every read."""

from __future__ import annotations

import io
import logging
import sys
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.errors import SanError
from san_desktop.core.logging_setup import setup_logging
from san_desktop.services.secrets import GITHUB_TOKEN, github_token, secret_with_source
from tests.support.failing_keyring import REASON, FailingKeyring
from tests.support.github_server import TOKEN, fake_github_server

BACKENDS = {"failing": FailingKeyring, "none": keyring.backends.fail.Keyring}


@pytest.fixture(params=sorted(BACKENDS))
def no_keyring(request: pytest.FixtureRequest) -> str:
    keyring.set_keyring(BACKENDS[request.param]())  # (the autouse fixture puts the memory one back)
    return str(request.param)


def _san(capsys: pytest.CaptureFixture[str], *args: str, stdin: str = "") -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_token_set_names_gh_token_when_no_keyring_can_store_it(
    no_keyring: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _san(capsys, "github", "token", "set", stdin="ghp_typedTOKEN0123456789abcdefABCDEF\n")
    assert code == 1
    assert "GH_TOKEN" in err, err
    assert "GITHUB_TOKEN" in err, err
    assert "The GitHub token was not stored" in err, err
    assert "ghp_typedTOKEN" not in err
    assert "Error:" not in err  # no exception class names


def test_config_set_api_key_names_openai_api_key_when_no_keyring_can_store_it(
    no_keyring: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _san(capsys, "config", "set", "ai.api_key", stdin="sk-typed-0123456789abcdef\n")
    assert code == 1
    assert "OPENAI_API_KEY" in err, err
    assert "The API key was not stored" in err, err
    assert "sk-typed" not in err


def test_github_test_without_a_token_names_gh_token_and_not_the_keyring(
    no_keyring: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _san(capsys, "github", "test")
    assert code == 1
    assert "No GitHub token" in err, err
    assert "GH_TOKEN" in err, err
    assert "token set" not in err, err  # the way that cannot work here is not offered


def test_github_test_with_a_keyring_offers_every_way(app: SanApp) -> None:
    with pytest.raises(SanError) as refused:
        app.connections.test_github(app.settings.github)
    assert "Settings" in str(refused.value)
    assert "`san github token set`" in str(refused.value)
    assert "GH_TOKEN" in str(refused.value)


def test_gh_token_works_when_the_keyring_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    keyring.set_keyring(FailingKeyring())
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    with fake_github_server() as github:
        assert _san(capsys, "config", "set", "github.api_url", github.url)[0] == 0
        assert _san(capsys, "config", "set", "github.repository", "me/til")[0] == 0
        code, out, err = _san(capsys, "github", "test")
    assert code == 0, err
    assert "(token from GH_TOKEN)" in out


def test_a_failing_keyring_is_logged_once(data_dir: Path) -> None:
    failing = FailingKeyring()
    keyring.set_keyring(failing)
    log_file = setup_logging(data_dir, stderr=False)
    for _poll in range(5):  # the window reads the token every so often
        assert github_token() is None
        assert secret_with_source(GITHUB_TOKEN) == (None, "none")
    logging.shutdown()
    text = log_file.read_text(encoding="utf-8")
    assert text.count(REASON) == 1, text
    assert "GH_TOKEN" in text
    assert failing.calls == 1  # not asked again on every poll
