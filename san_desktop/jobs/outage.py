"""The library's server out of reach, as the job system meets it (a restart, a dropped network).

Every worker, the heartbeat and the maintenance reads meet the same outage at once; it is said once when it
begins and once when it ends (not a traceback per worker per try), and the next try waits a little longer each
time (``FIRST_WAIT_SECONDS`` doubling up to ``LONGEST_WAIT_SECONDS``), so a server coming back is not met by
every thread at once. Plain code, thread-safe: the runner asks it before starting work, and ``san jobs run``
asks how long it has lasted (it gives up past a bound).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from san_desktop.core.errors import DatabaseUnreachableError

log = logging.getLogger(__name__)

FIRST_WAIT_SECONDS = 0.5
LONGEST_WAIT_SECONDS = 15.0


class Outage:
    """Whether the library's server is away now, since when, and when to try it again."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # when the first failure of this outage was met
        self._wait = 0.0  # before the next try, from the last failure
        self._last_failure = 0.0
        self.reason: DatabaseUnreachableError | None = None  # the latest failure, in words

    def failed(self, error: DatabaseUnreachableError) -> None:
        """A try met the server away: said when the outage begins, and the next try waits longer."""
        now = self._clock()
        with self._lock:
            began = self._since is None
            if began:
                self._since = now
                self._wait = FIRST_WAIT_SECONDS
            elif now - self._last_failure >= self._wait:  # a new try's failure, not one of the same round
                self._wait = min(LONGEST_WAIT_SECONDS, self._wait * 2)
            self._last_failure = now
            self.reason = error
        if began:
            cause = f" ({error.cause})" if error.cause else ""
            log.warning(
                "The database %s cannot be reached%s; jobs wait, and go on once it answers (tried again every few "
                "seconds).",
                error.where,
                cause,
            )

    def now(self) -> float:
        """When a try starts (for ``passed``)."""
        return self._clock()

    def passed(self, tried_at: float | None = None) -> None:
        """A try reached the server: the outage, if there was one, is over (said once). ``tried_at``: when that
        try started (``now``); one that started before the outage began (it was answered just before the
        server went) says nothing of it."""
        with self._lock:
            if self._since is None or (tried_at is not None and tried_at < self._since):
                return
            since, self._since = self._since, None
            self._wait = 0.0
            self.reason = None
        if since is not None:
            log.warning("The database answers again after %.0f s; jobs go on.", self._clock() - since)

    @property
    def down(self) -> bool:
        with self._lock:
            return self._since is not None

    def seconds_down(self) -> float:
        """How long the server has been away (0 when it is not)."""
        with self._lock:
            since = self._since
        return 0.0 if since is None else self._clock() - since

    def seconds_to_wait(self) -> float:
        """How long before the next try (0: try now)."""
        with self._lock:
            if self._since is None:
                return 0.0
            return max(0.0, self._last_failure + self._wait - self._clock())
