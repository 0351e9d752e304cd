from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """A settable UTC clock for the queue: time moves only when a test says so."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
