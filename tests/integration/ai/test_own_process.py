"""The embedded provider computing in child processes, as the window runs it (``ai.own_process``): the same
cards and vectors as in-process, errors of the same kind with the same sentence, a child killed under a call
failing only that call (as transient), nothing left running once closed, and in-process work when no child
can start."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from san_desktop.ai import own_process
from san_desktop.ai.local import LocalProvider
from san_desktop.ai.own_process import STOP_SECONDS, ChildProcessStoppedError, OwnProcessProvider
from san_desktop.core.errors import PermanentError, TransientError
from san_desktop.core.failpoints import ENV_DIR, ENV_POINTS
from tests.support.processes import is_running

TEXTS = [
    "# SQLite WAL\n\nA checkpoint copies pages from the write-ahead log back into the database file. Readers "
    "keep reading the old pages meanwhile, so a long reader can hold a checkpoint back.",
    "# 래프트 합의\n\n래프트는 리더를 선출하고 리더는 팔로워에게 로그를 복제합니다. 과반수가 저장하면 커밋됩니다.",
]
CATEGORIES = ["Databases", "Distributed systems", "Python"]


@pytest.fixture
def provider() -> Iterator[OwnProcessProvider]:
    made = OwnProcessProvider(time_limit_seconds=None)
    yield made
    made.close()


def test_cards_and_vectors_made_in_the_child_are_those_made_in_process(provider: OwnProcessProvider) -> None:
    here = LocalProvider(time_limit_seconds=None)
    for text in TEXTS:
        assert provider.analyze_card(text, CATEGORIES) == here.analyze_card(text, CATEGORIES)
        assert provider.refine_scrap(text) == here.refine_scrap(text)
    np.testing.assert_allclose(provider.embed(TEXTS), here.embed(TEXTS), atol=1e-6)
    assert provider.embedding_model == here.embedding_model
    children = provider.process_ids()
    assert len(children) == 1  # one call at a time: one child, kept for the next call
    assert os.getpid() not in children
    assert provider.failure is None


def test_closing_stops_the_children(provider: OwnProcessProvider) -> None:
    assert provider.warm_up()
    (child,) = provider.process_ids()
    assert is_running(child)
    provider.close()
    assert provider.process_ids() == []
    assert not is_running(child)  # stopped and reaped


def test_an_interrupt_ends_a_child_still_starting_and_the_warm_up_waiting_for_it(
    provider: OwnProcessProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app closing while the child loads its encoder: the warm-up returns at once, with no child and no
    failure to start (the next start warms up again)."""
    monkeypatch.setenv(ENV_POINTS, "own_process.warm_up")  # the child inherits it: it stays starting
    monkeypatch.setenv(ENV_DIR, str(tmp_path))
    warmed: list[bool] = []
    warming = threading.Thread(target=lambda: warmed.append(provider.warm_up()), daemon=True)
    warming.start()
    marker = tmp_path / "own_process.warm_up.reached"
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text()):
        warming.join(0.05)
        assert warming.is_alive(), "the warm-up ended before the child reached the fail point"
        assert time.monotonic() < deadline, "the child never reached the fail point"
    child = int(marker.read_text())
    try:
        interrupted_at = time.monotonic()
        provider.interrupt()
        warming.join(10)
        assert time.monotonic() - interrupted_at < STOP_SECONDS + 1
        assert warmed == [False]
        assert not is_running(child)
        assert provider.failure is None  # not a child that could not start
    finally:
        if is_running(child):
            os.kill(child, signal.SIGKILL)


def test_an_error_in_the_child_reaches_the_job_as_the_same_kind_with_the_same_sentence() -> None:
    limited = OwnProcessProvider(time_limit_seconds=1e-9)
    try:
        with pytest.raises(PermanentError) as in_child:
            limited.analyze_card(TEXTS[0], CATEGORIES)
    finally:
        limited.close()
    with pytest.raises(PermanentError) as in_process:
        LocalProvider(time_limit_seconds=1e-9).analyze_card(TEXTS[0], CATEGORIES)
    assert str(in_child.value) == str(in_process.value)
    assert "took too long to analyse" in str(in_child.value)


def test_a_child_killed_under_a_call_fails_that_call_as_transient_and_the_next_call_gets_a_new_child(
    provider: OwnProcessProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_POINTS, "local.analyze_card@2")  # the child inherits it: its second card stops
    monkeypatch.setenv(ENV_DIR, str(tmp_path))
    provider.analyze_card(TEXTS[0], CATEGORIES)
    (first,) = provider.process_ids()
    failure: list[BaseException] = []

    def second_card() -> None:
        try:
            provider.analyze_card(TEXTS[1], CATEGORIES)
        except BaseException as exc:
            failure.append(exc)

    caller = threading.Thread(target=second_card, daemon=True)  # (a test that fails leaves no thread behind)
    caller.start()
    marker = tmp_path / "local.analyze_card.reached"
    deadline = time.monotonic() + 60
    while not marker.exists():
        caller.join(0.05)
        assert caller.is_alive(), "the call ended before the child reached the fail point"
        assert time.monotonic() < deadline, "the child never reached the fail point"
    assert int(marker.read_text()) == first
    os.kill(first, signal.SIGKILL)
    caller.join(30)
    assert not caller.is_alive()
    (error,) = failure
    assert isinstance(error, ChildProcessStoppedError)
    assert isinstance(error, TransientError)  # the runner tries the job again
    assert "exit code -9" in str(error)
    assert provider.process_ids() == []

    monkeypatch.delenv(ENV_POINTS)
    assert provider.analyze_card(TEXTS[1], CATEGORIES).title
    (second,) = provider.process_ids()
    assert second != first


class _NeverReady(own_process._Child):
    def wait_until_ready(self) -> None:
        raise TimeoutError("the embedded AI's process did not start within 60 s")


def test_without_a_child_the_work_is_done_in_process_and_the_reason_is_kept(
    provider: OwnProcessProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(own_process, "_Child", _NeverReady)
    here = LocalProvider(time_limit_seconds=None)
    assert not provider.warm_up()
    assert provider.analyze_card(TEXTS[1], CATEGORIES) == here.analyze_card(TEXTS[1], CATEGORIES)
    assert provider.failure is not None
    assert "did not start within 60 s" in provider.failure
    assert provider.process_ids() == []  # the one that never answered was stopped


def test_an_error_that_cannot_cross_as_itself_crosses_as_its_kind() -> None:
    class ServerSaidError(TransientError):
        def __init__(self, code: int) -> None:
            super().__init__(f"server said {code}")

    crossed = own_process.portable(ServerSaidError(503))
    assert type(crossed) is TransientError
    assert str(crossed) == "server said 503"

    class LocalBugError(Exception):
        pass

    bug = own_process.portable(LocalBugError("no such key"))
    assert type(bug) is RuntimeError
    assert str(bug) == "LocalBugError: no such key"  # a bug is reported by its type, as in-process
    assert type(own_process.portable(KeyError("x"))) is KeyError  # (picklable: crosses as itself)
    kept = PermanentError("as it is")
    assert own_process.portable(kept) is kept
