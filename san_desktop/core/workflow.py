"""Multi-step workflows (seed 002): each step has an in-progress and a done state, any in-progress state
may fail, and a retry resumes at the failed step. The allowed transitions are this one table, checked on
every change; anything else is ``IllegalTransitionError``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TilStatus(StrEnum):
    """Where a day's TIL stands. Stored as text with a CHECK constraint (``daily_summaries.status``)."""

    CREATED = "CREATED"
    COLLECTING = "COLLECTING"
    COLLECTED = "COLLECTED"
    DRAFTING = "DRAFTING"
    DRAFTED = "DRAFTED"
    EMBEDDING = "EMBEDDING"
    EMBEDDED = "EMBEDDED"
    LINKING = "LINKING"
    LINKED = "LINKED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class Step:
    name: str  # what people read: "collect", "draft", "embed", "link"
    running: TilStatus
    done: TilStatus


TIL_STEPS: tuple[Step, ...] = (
    Step("collect", TilStatus.COLLECTING, TilStatus.COLLECTED),
    Step("draft", TilStatus.DRAFTING, TilStatus.DRAFTED),
    Step("embed", TilStatus.EMBEDDING, TilStatus.EMBEDDED),
    Step("link", TilStatus.LINKING, TilStatus.LINKED),
)
STEP_BY_NAME = {step.name: step for step in TIL_STEPS}


def _table() -> dict[TilStatus, frozenset[TilStatus]]:
    allowed: dict[TilStatus, set[TilStatus]] = {status: set() for status in TilStatus}
    allowed[TilStatus.CREATED].add(TIL_STEPS[0].running)
    for index, step in enumerate(TIL_STEPS):
        allowed[step.running] |= {step.done, TilStatus.FAILED}
        following = TIL_STEPS[index + 1].running if index + 1 < len(TIL_STEPS) else TilStatus.COMPLETED
        allowed[step.done].add(following)
        allowed[TilStatus.FAILED].add(step.running)  # a retry resumes at the failed step
    allowed[TilStatus.COMPLETED].add(TIL_STEPS[0].running)  # generate again (the inputs changed)
    return {status: frozenset(targets) for status, targets in allowed.items()}


TIL_TRANSITIONS: dict[TilStatus, frozenset[TilStatus]] = _table()
TIL_ACTIVE = frozenset(step.running for step in TIL_STEPS)


class IllegalTransitionError(Exception):
    """A change the workflow table does not allow: a bug, never a user's error."""

    def __init__(self, old: TilStatus, new: TilStatus) -> None:
        allowed = ", ".join(sorted(TIL_TRANSITIONS[old])) or "nothing"
        super().__init__(f"A TIL cannot go from {old.value} to {new.value} (from {old.value}: {allowed})")
        self.old = old
        self.new = new


def check_transition(old: TilStatus, new: TilStatus) -> None:
    if new not in TIL_TRANSITIONS[old]:
        raise IllegalTransitionError(old, new)


def resume_step(status: TilStatus, failed_step: str | None) -> int:
    """The index of the step a run starts at: after the last finished step, or at the failed one."""
    if status is TilStatus.FAILED and failed_step in STEP_BY_NAME:
        return TIL_STEPS.index(STEP_BY_NAME[failed_step])
    for index, step in enumerate(TIL_STEPS):
        if status in (step.running, step.done):
            return index + 1 if status is step.done else index
    return 0  # CREATED, COMPLETED (regenerate), or FAILED without a known step
