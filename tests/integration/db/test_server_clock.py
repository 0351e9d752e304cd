"""Every machine of a shared library stamps jobs and leases with its estimate of the server's clock
(``ServerClock``): a reply held up for seconds must not set that estimate seconds off."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from san_desktop.db.backends.postgres.server import CLOCK_SAMPLES, ServerClock
from san_desktop.db.database import Database

START = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def test_the_server_clock_measured_on_the_same_machine_agrees_with_it(machines: tuple[Database, Database]) -> None:
    laptop, _ = machines
    clock = ServerClock(laptop.engine)
    assert abs(clock.offset) < timedelta(milliseconds=500)  # one computer, one clock: only the round trip


def test_a_reply_held_up_for_seconds_does_not_set_the_clock_off(
    machines: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first reply took 6 s to come back (the server answered at once: it is 3 s off the middle); the
    others took a millisecond. The server's clock runs 1 s ahead of this machine's."""
    laptop, _ = machines

    def samples() -> Iterator[tuple[datetime, datetime, datetime]]:
        yield START, START + timedelta(seconds=1), START + timedelta(seconds=6)
        for n in range(1, CLOCK_SAMPLES):
            before = START + timedelta(seconds=10 * n)
            yield before, before + timedelta(seconds=1, microseconds=500), before + timedelta(milliseconds=1)

    taken = samples()
    monkeypatch.setattr(ServerClock, "_sample", staticmethod(lambda conn: next(taken)))

    clock = ServerClock(laptop.engine)

    assert clock.offset == timedelta(seconds=1)
    assert next(taken, None) is None  # every sample was taken


def test_a_sample_is_the_servers_time_between_two_of_this_machines(machines: tuple[Database, Database]) -> None:
    laptop, _ = machines
    with laptop.engine.connect() as conn:
        before, server, after = ServerClock._sample(conn)
        told = conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one()
    assert before <= after
    assert server.tzinfo is not None
    assert server <= told
