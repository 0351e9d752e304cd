"""A time limit for the embedded provider's work (issue 23).

Its analysis is Python on the job's worker thread, and a thread cannot be stopped from outside: so the
work checks the clock itself, between sentences, lines and rounds (``check_time``), and past the limit it
stops with a sentence a person can act on. The limit holds for the calls made inside ``time_limit`` on
the same thread (a context variable: each worker thread has its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from san_desktop.core.errors import PermanentError

Clock = Callable[[], float]


class AnalysisTooLongError(PermanentError):
    """The same text would take as long again: the job fails at once, its reason says what to do."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"The text took too long to analyse offline (over {seconds:g} s): shorten it, raise "
            "ai.local_time_limit_seconds in the settings, or use an AI server."
        )
        self.seconds = seconds


@dataclass(frozen=True)
class _Limit:
    seconds: float
    ends_at: float
    clock: Clock


_current: ContextVar[_Limit | None] = ContextVar("san_analysis_time_limit", default=None)


@contextmanager
def time_limit(seconds: float | None, clock: Clock = time.monotonic) -> Iterator[None]:
    """Work inside may take ``seconds`` (None: as long as it takes)."""
    if seconds is None:
        yield
        return
    token = _current.set(_Limit(seconds, clock() + seconds, clock))
    try:
        yield
    finally:
        _current.reset(token)


def check_time() -> None:
    """Raise ``AnalysisTooLongError`` once the current time limit has passed (cheap: call it often)."""
    limit = _current.get()
    if limit is not None and limit.clock() > limit.ends_at:
        raise AnalysisTooLongError(limit.seconds)
