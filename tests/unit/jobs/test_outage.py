"""The library's server out of reach: said once when it begins and once when it ends, whatever the number of
threads that meet it, with a wait before the next try that doubles up to a bound."""

from __future__ import annotations

import logging

import pytest

from san_desktop.core.errors import DatabaseUnreachableError
from san_desktop.jobs.outage import FIRST_WAIT_SECONDS, LONGEST_WAIT_SECONDS, Outage

AWAY = DatabaseUnreachableError("san on db.example.org", "cannot be reached", "Check it", "Connection refused")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_is_said_once_however_many_meet_it_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    outage = Outage(clock)
    with caplog.at_level(logging.INFO, logger="san_desktop.jobs.outage"):
        for _ in range(20):  # every worker, every try
            outage.failed(AWAY)
            clock.now += 1
        outage.passed()
        outage.passed()
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 2
    assert said[0].startswith("The database san on db.example.org cannot be reached (Connection refused); jobs wait")
    assert said[1] == "The database answers again after 20 s; jobs go on."
    assert not outage.down
    assert outage.seconds_to_wait() == 0


def test_the_wait_before_the_next_try_doubles_up_to_a_bound() -> None:
    clock = Clock()
    outage = Outage(clock)
    waits = []
    for _ in range(10):
        outage.failed(AWAY)
        waits.append(outage.seconds_to_wait())
        clock.now += outage.seconds_to_wait()  # the next try, when it is due
    assert waits[0] == FIRST_WAIT_SECONDS
    assert waits[1] == 2 * FIRST_WAIT_SECONDS
    assert waits[-1] == LONGEST_WAIT_SECONDS
    assert waits == sorted(waits)


def test_threads_failing_in_the_same_round_do_not_lengthen_the_wait() -> None:
    clock = Clock()
    outage = Outage(clock)
    outage.failed(AWAY)
    outage.failed(AWAY)  # a second worker, at the same moment
    assert outage.seconds_to_wait() == FIRST_WAIT_SECONDS
    assert outage.seconds_down() == 0
    clock.now += 3
    assert outage.seconds_down() == 3


def test_an_answer_to_a_try_made_before_the_outage_began_does_not_end_it() -> None:
    """A restart drops every connection at once: a statement answered just before is no news of the server."""
    clock = Clock()
    outage = Outage(clock)
    before = outage.now()
    clock.now += 0.1
    outage.failed(AWAY)
    outage.passed(before)
    assert outage.down
    outage.passed(outage.now())
    assert not outage.down
