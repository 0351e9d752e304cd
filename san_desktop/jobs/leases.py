"""The heartbeat of running jobs: their leases renewed while they run.

A claimed job's lease says until when its machine answers for it (``jobs.lease_seconds``). While the job runs,
this renews the leases of every job its executor runs, a third of a lease at a time, in one short transaction
on a thread of its own; so a job longer than its lease stays its machine's, and a machine that stops (killed,
powered off, cut off from the server) stops renewing: another machine takes its work over once the leases ran
out (``JobStore.recover_interrupted``). The thread runs only while jobs run.
"""

from __future__ import annotations

import logging
import threading

from san_desktop.jobs.outage import Outage
from san_desktop.queue.records import Claim
from san_desktop.queue.store import JobStore

log = logging.getLogger(__name__)

BEATS_PER_LEASE = 3  # renewed this often within a lease: two beats may fail (a server restarting) before it ends


class LeaseKeeper:
    """Renews the leases of the claims it is given (``add``) until they are taken back (``remove``). No signals."""

    def __init__(self, queue: JobStore, outage: Outage, stop: threading.Event) -> None:
        """``stop``: set when the app closes; the heartbeat ends with it (the jobs still running then are given
        back, or recovered by whoever comes next)."""
        self.queue = queue
        self.outage = outage
        self.stop = stop
        self._claims: dict[str, Claim] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, claim: Claim) -> None:
        with self._changed:
            self._claims[claim.job.id] = claim
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="san-job-leases", daemon=True)
                self._thread.start()

    def remove(self, claim: Claim) -> None:
        with self._changed:
            self._claims.pop(claim.job.id, None)
            if not self._claims:
                self._changed.notify_all()  # the thread ends

    def halt(self) -> None:
        """End the heartbeat now (``stop`` is set): the app is closing."""
        with self._changed:
            self._changed.notify_all()

    def interval(self) -> float:
        return float(self.queue.settings.lease_seconds) / BEATS_PER_LEASE

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: not self._claims or self.stop.is_set(), timeout=self.interval())
                claims = list(self._claims.values())
                if not claims or self.stop.is_set():
                    self._thread = None
                    return
            self.beat(claims)

    def beat(self, claims: list[Claim]) -> None:
        """Renew ``claims``' leases now (one transaction). One that is no longer its claim's (cancelled, or
        taken over after this machine was cut off too long) is left alone: its result will be dropped."""
        tried_at = self.outage.now()
        try:
            kept = self.queue.renew_leases(claims)
        except Exception as exc:
            away = self.queue.db.unreachable(exc)
            if away is None:
                log.warning("Could not renew the leases of %d running job(s)", len(claims), exc_info=True)
            else:
                self.outage.failed(away)
            return
        self.outage.passed(tried_at)
        lost = {claim.job.id for claim in claims} - kept
        if lost:
            log.info("Job(s) %s are no longer this runner's; their results will be dropped", ", ".join(sorted(lost)))
