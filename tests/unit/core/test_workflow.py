"""The TIL transition table: every pair of states, allowed ones succeed and all others raise."""

from __future__ import annotations

import itertools

import pytest

from san_desktop.core.workflow import (
    TIL_STEPS,
    IllegalTransitionError,
    TilStatus,
    check_transition,
    resume_step,
)

S = TilStatus
ALLOWED = {
    (S.CREATED, S.COLLECTING),
    (S.COLLECTING, S.COLLECTED), (S.COLLECTING, S.FAILED),
    (S.COLLECTED, S.DRAFTING),
    (S.DRAFTING, S.DRAFTED), (S.DRAFTING, S.FAILED),
    (S.DRAFTED, S.EMBEDDING),
    (S.EMBEDDING, S.EMBEDDED), (S.EMBEDDING, S.FAILED),
    (S.EMBEDDED, S.LINKING),
    (S.LINKING, S.LINKED), (S.LINKING, S.FAILED),
    (S.LINKED, S.COMPLETED),
    (S.FAILED, S.COLLECTING), (S.FAILED, S.DRAFTING), (S.FAILED, S.EMBEDDING), (S.FAILED, S.LINKING),
    (S.COMPLETED, S.COLLECTING),
}  # fmt: skip


@pytest.mark.parametrize(("old", "new"), list(itertools.product(TilStatus, TilStatus)))
def test_every_pair_of_states(old: TilStatus, new: TilStatus) -> None:
    if (old, new) in ALLOWED:
        check_transition(old, new)
    else:
        with pytest.raises(IllegalTransitionError, match=f"from {old.value} to {new.value}"):
            check_transition(old, new)


def test_steps_pair_a_running_and_a_done_state() -> None:
    assert [(step.name, step.running, step.done) for step in TIL_STEPS] == [
        ("collect", S.COLLECTING, S.COLLECTED),
        ("draft", S.DRAFTING, S.DRAFTED),
        ("embed", S.EMBEDDING, S.EMBEDDED),
        ("link", S.LINKING, S.LINKED),
    ]


@pytest.mark.parametrize(
    ("status", "failed_step", "index"),
    [
        (S.CREATED, None, 0),
        (S.COLLECTED, None, 1),
        (S.DRAFTING, None, 1),  # interrupted inside the draft step: the draft again
        (S.EMBEDDED, None, 3),
        (S.FAILED, "embed", 2),
        (S.FAILED, "link", 3),
        (S.COMPLETED, None, 0),
    ],
)
def test_a_run_resumes_after_the_last_finished_step(status: TilStatus, failed_step: str | None, index: int) -> None:
    assert resume_step(status, failed_step) == index
