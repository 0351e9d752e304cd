from __future__ import annotations

from san_desktop.jobs.breaker import BreakerState, BreakerStatus, CircuitBreaker


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _breaker(clock: FakeClock, changes: list[BreakerStatus] | None = None) -> CircuitBreaker:
    return CircuitBreaker(3, 10.0, 40.0, clock=clock, on_change=None if changes is None else changes.append)


def test_opens_after_consecutive_failures_only() -> None:
    clock = FakeClock()
    breaker = _breaker(clock)
    breaker.record_failure()
    breaker.record_failure()
    breaker.record_success()  # the streak is broken
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.status().state is BreakerState.CLOSED
    breaker.record_failure()
    assert breaker.status().state is BreakerState.OPEN
    assert not breaker.try_acquire()


def test_one_probe_after_cooldown_then_closed_on_success() -> None:
    clock = FakeClock()
    changes: list[BreakerStatus] = []
    breaker = _breaker(clock, changes)
    for _ in range(3):
        breaker.record_failure()
    clock.now += 9.9
    assert not breaker.try_acquire()
    clock.now += 0.2
    assert breaker.try_acquire()  # the probe
    assert not breaker.try_acquire()  # only one at a time
    breaker.record_success()
    assert breaker.try_acquire()
    assert [change.state for change in changes] == [BreakerState.OPEN, BreakerState.HALF_OPEN, BreakerState.CLOSED]


def test_failed_probe_doubles_the_cooldown_up_to_the_maximum() -> None:
    clock = FakeClock()
    breaker = _breaker(clock)
    for _ in range(3):
        breaker.record_failure()
    cooldowns = []
    for _ in range(4):
        clock.now += breaker.status().cooldown
        assert breaker.try_acquire()
        breaker.record_failure()
        cooldowns.append(breaker.status().cooldown)
    assert cooldowns == [20.0, 40.0, 40.0, 40.0]
    assert breaker.seconds_until_probe() == 40.0


def test_unused_probe_is_given_back() -> None:
    clock = FakeClock()
    breaker = _breaker(clock)
    for _ in range(3):
        breaker.record_failure()
    clock.now += 10
    assert breaker.try_acquire()
    breaker.release_unused()
    assert breaker.try_acquire()


def test_a_hold_pauses_without_a_probe_until_reset() -> None:
    clock = FakeClock()
    changes: list[BreakerStatus] = []
    breaker = _breaker(clock, changes)
    breaker.hold("The AI server rejected the API key (401): set a valid key in Settings")
    assert breaker.paused()
    clock.now += 10_000.0
    assert not breaker.try_acquire()  # no cooldown ends it: the same key would be rejected again
    assert breaker.paused()
    breaker.record_failure()  # a request already on its way when it paused
    status = breaker.status()
    assert (status.state, status.retry_at) == (BreakerState.OPEN, None)
    assert status.describe() == "paused. The AI server rejected the API key (401): set a valid key in Settings"
    breaker.reset()  # a new key saved, or "Try now"
    assert not breaker.paused()
    assert breaker.try_acquire()
    assert [(change.state, change.held) for change in changes] == [
        (BreakerState.OPEN, "The AI server rejected the API key (401): set a valid key in Settings"),
        (BreakerState.CLOSED, None),
    ]


def test_the_last_failure_is_kept_for_the_pause_to_name() -> None:
    clock = FakeClock()
    breaker = _breaker(clock)
    for number in range(3):
        breaker.record_failure(f"HTTP 500 from the server (#{number})")
    status = breaker.status()
    assert status.last_error == "HTTP 500 from the server (#2)"
    assert breaker.paused()
    clock.now += 10.0
    assert not breaker.paused()  # the probe is due
    breaker.record_success()
    assert breaker.status().last_error is None


def test_a_failure_while_paused_does_not_change_the_number_the_pause_was_told_with() -> None:
    """Issue 24: the Jobs header said "paused after 6 failures in a row", the status bar 5 — a job already
    running when the breaker opened failed too, and was counted after the pause had been announced."""
    clock = FakeClock()
    changes: list[BreakerStatus] = []
    breaker = _breaker(clock, changes)
    for _ in range(3):
        breaker.record_failure("timed out")
    (opened,) = changes
    breaker.record_failure("timed out")  # the other worker's job, started before the pause
    assert breaker.status().consecutive_failures == opened.consecutive_failures == 3
    assert breaker.status().describe(clock.now) == opened.describe(clock.now)
    clock.now += breaker.status().cooldown
    assert breaker.try_acquire()
    breaker.record_failure("timed out")  # the probe failed: one more in the streak, told with the new pause
    assert changes[-1].consecutive_failures == breaker.status().consecutive_failures == 4
