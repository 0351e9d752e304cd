"""A circuit breaker for the AI pool: after several consecutive transient failures stop calling the AI
server for a cooldown, then let one probe job through; success closes it, failure doubles the cooldown.

The original system burned its AI budget in a retry × re-enqueue × scheduler loop against a slow server;
this is what stops that. A server that rejects the key is held open (``hold``) with no probe at all, until
the user changes the settings or says "try now" (``reset``): the same key would only be rejected again.
Thread-safe: workers record outcomes, the runner reads the state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class BreakerState(StrEnum):
    CLOSED = "CLOSED"  # calls flow
    OPEN = "OPEN"  # paused until the cooldown ends
    HALF_OPEN = "HALF_OPEN"  # one probe call is allowed through


@dataclass(frozen=True)
class BreakerStatus:
    state: BreakerState
    consecutive_failures: int
    retry_at: float | None  # monotonic time when an OPEN breaker lets a probe through (None: held)
    cooldown: float
    held: str | None = None  # why it is held open until reset (the server rejected the key), a sentence
    last_error: str | None = None  # the latest failure in the streak, its first line

    def describe(self, now: float | None = None) -> str:
        if self.state is BreakerState.CLOSED:
            return "running"
        if self.state is BreakerState.HALF_OPEN:
            return "testing the AI server with one job"
        if self.held is not None:
            return f"paused. {self.held}"
        remaining = max(0.0, (self.retry_at or 0.0) - (now if now is not None else time.monotonic()))
        return f"paused after {self.consecutive_failures} failures in a row; trying again in {remaining:.0f} s"


class CircuitBreaker:
    def __init__(
        self,
        failure_threshold: int,
        cooldown: float,
        max_cooldown: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[BreakerStatus], None] | None = None,
    ) -> None:
        self.failure_threshold = failure_threshold
        self.base_cooldown = cooldown
        self.max_cooldown = max_cooldown
        self.clock = clock
        self.on_change = on_change
        # Changes are told while it is held, so that they are told in the order they were made (told after it,
        # a probe's HALF_OPEN could be told after the CLOSED of a success on another thread, and the pool
        # shown as testing while it runs). Re-entrant: a listener on the same thread may read the state.
        self._lock = threading.RLock()
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._cooldown = cooldown
        self._retry_at: float | None = None
        self._probe_out = False
        self._held: str | None = None
        self._last_error: str | None = None

    def status(self) -> BreakerStatus:
        with self._lock:
            return self._status()

    def _status(self) -> BreakerStatus:
        return BreakerStatus(self._state, self._failures, self._retry_at, self._cooldown, self._held, self._last_error)

    def seconds_until_probe(self) -> float | None:
        """Seconds until an OPEN breaker lets a probe through; None when it is not OPEN, or held."""
        with self._lock:
            if self._state is not BreakerState.OPEN or self._retry_at is None:
                return None
            return max(0.0, self._retry_at - self.clock())

    def paused(self) -> bool:
        """Whether no call may start now: OPEN, and held or its cooldown not over."""
        with self._lock:
            if self._state is not BreakerState.OPEN:
                return False
            return self._retry_at is None or self.clock() < self._retry_at

    def try_acquire(self) -> bool:
        """May a call start now? In HALF_OPEN exactly one caller gets True until it reports back."""
        changed = None
        with self._lock:
            if self._state is BreakerState.CLOSED:
                return True
            if self._state is BreakerState.OPEN:
                if self._retry_at is not None and self.clock() >= self._retry_at:
                    self._state = BreakerState.HALF_OPEN
                    self._probe_out = False
                    changed = self._status()
                else:
                    return False
            allowed = not self._probe_out
            self._probe_out = True
            if changed is not None:
                self._notify(changed)
        return allowed

    def release_unused(self) -> None:
        """A caller that acquired but found no work gives the probe slot back."""
        with self._lock:
            if self._state is BreakerState.HALF_OPEN:
                self._probe_out = False

    def record_success(self) -> None:
        with self._lock:
            was = self._state
            self._state = BreakerState.CLOSED
            self._failures = 0
            self._cooldown = self.base_cooldown
            self._retry_at = None
            self._probe_out = False
            self._held = None
            self._last_error = None
            if was is not BreakerState.CLOSED:
                self._notify(self._status())

    def reset(self) -> None:
        """Close at once (the settings that made calls fail changed, or the user said "try now")."""
        self.record_success()

    def record_failure(self, error: str | None = None) -> None:
        """A transient failure (timeout, refused connection, 5xx, rate limit); ``error`` says what it was.
        While paused, the failure of a call that started before the pause changes nothing: the pause was
        told with its number (the status bar), and the Jobs page must say the same."""
        with self._lock:
            if self._state is BreakerState.OPEN:
                return
            self._failures += 1
            self._last_error = error or self._last_error
            changed = None
            if self._state is BreakerState.HALF_OPEN:
                self._cooldown = min(self.max_cooldown, self._cooldown * 2)
                self._open()
                changed = self._status()
            elif self._state is BreakerState.CLOSED and self._failures >= self.failure_threshold:
                self._open()
                changed = self._status()
            if changed is not None:
                self._notify(changed)

    def hold(self, reason: str) -> None:
        """Pause until ``reset``, with no probe: ``reason`` (a sentence) says what the user must change."""
        with self._lock:
            changed = self._state is not BreakerState.OPEN or self._held != reason
            self._state = BreakerState.OPEN
            self._retry_at = None
            self._probe_out = False
            self._held = reason
            if changed:
                self._notify(self._status())

    def record_neutral(self) -> None:
        """An outcome that says nothing about the server (permanent error, cancel): free the probe."""
        self.release_unused()

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        self._retry_at = self.clock() + self._cooldown
        self._probe_out = False

    def _notify(self, status: BreakerStatus) -> None:
        if self.on_change is not None:
            self.on_change(status)
