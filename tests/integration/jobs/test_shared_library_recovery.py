"""Recovery in a library that two machines share on a PostgreSQL server (two data folders, one database): a
machine's sweep ends only its own earlier sessions, and takes back another machine's running job only once
that job's lease ran out."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from san_desktop.core.enums import AttemptOutcome, JobPool, JobStatus, JobType
from san_desktop.core.paths import machine_id
from san_desktop.core.settings import JobSettings
from san_desktop.db.database import Database
from san_desktop.db.models import AppSession
from san_desktop.queue.errors import JobSupersededError
from san_desktop.queue.store import JobStore
from san_desktop.queue.upkeep import Recovered
from san_desktop.services.app_sessions import start_session
from san_desktop.services.recovery.sweep import sweep
from tests.support.jobs import fast_settings

AI_TYPES = frozenset({JobType.CARD_ANALYSIS})


def _ended(db: Database, session_id: str) -> bool:
    with db.sessions() as session:
        row = session.get(AppSession, session_id)
        assert row is not None
        return row.ended_at is not None


def test_each_data_folder_is_a_machine_of_its_own(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    assert machine_id(first) == machine_id(first)  # made once, then read
    assert machine_id(first) != machine_id(second)


def test_a_sweep_leaves_another_machines_running_job_until_its_lease_runs_out(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    settings: JobSettings = fast_settings()
    laptop_queue, desktop_queue = JobStore(laptop, settings), JobStore(desktop, settings)
    laptop_session, desktop_session = start_session(laptop, "headless"), start_session(desktop, "headless")
    job = desktop_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = desktop_queue.claim_next(desktop_session, JobPool.AI, AI_TYPES)
    assert claim is not None
    assert claim.job.id == job.id

    report = sweep(laptop_queue, laptop_session, settings)  # the desktop is alive and working on it

    assert report.requeued_interrupted == []
    assert report.dead_sessions == 0
    assert laptop_queue.get(job.id).status is JobStatus.PROCESSING
    assert not _ended(laptop, desktop_session)

    assert claim.job.lease_until is not None
    later = claim.job.lease_until + timedelta(seconds=1)  # the desktop went away without a word
    report = sweep(laptop_queue, laptop_session, settings, now=later)

    assert report.requeued_interrupted == [job.id]
    recovered = laptop_queue.get(job.id)
    assert (recovered.status, recovered.owner_session, recovered.attempts) == (JobStatus.PENDING, None, 0)
    assert [attempt.outcome for attempt in laptop_queue.attempts(job.id)] == [AttemptOutcome.INTERRUPTED]
    # the desktop's late result is not written over the job's new state
    with pytest.raises(JobSupersededError):
        desktop_queue.complete(claim)
    assert laptop_queue.get(job.id).status is JobStatus.PENDING
    assert [attempt.outcome for attempt in laptop_queue.attempts(job.id)] == [
        AttemptOutcome.INTERRUPTED,
        AttemptOutcome.DISCARDED,
    ]


def test_a_restarted_machine_takes_back_its_own_killed_sessions_work_at_once(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    settings = fast_settings()
    desktop_queue = JobStore(desktop, settings)
    laptop_session = start_session(laptop, "headless")
    killed = start_session(desktop, "headless")
    job = desktop_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    assert desktop_queue.claim_next(killed, JobPool.AI, AI_TYPES) is not None

    restarted = start_session(desktop, "headless")
    report = sweep(desktop_queue, restarted, settings)  # its lease has not run out: the instance lock says

    assert report.requeued_interrupted == [job.id]
    assert report.dead_sessions == 1
    assert _ended(desktop, killed)
    assert not _ended(desktop, laptop_session)  # the laptop's session is the laptop's to end


def test_two_machines_taking_back_the_same_job_at_once_record_its_interruption_once(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    settings = fast_settings()
    laptop_queue, desktop_queue = JobStore(laptop, settings), JobStore(desktop, settings)
    gone = start_session(desktop, "headless")  # a third machine, as far as the other two can tell
    job = desktop_queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = desktop_queue.claim_next(gone, JobPool.AI, AI_TYPES)
    assert claim is not None
    assert claim.job.lease_until is not None
    later = claim.job.lease_until + timedelta(seconds=1)
    laptop_session, desktop_session = start_session(laptop, "headless"), start_session(desktop, "headless")
    found: list[Recovered] = []

    def desktop_sweep() -> None:
        with desktop.write() as session:
            found.append(desktop_queue.recover_interrupted(session, desktop_session, later))

    with laptop.write() as session:
        assert laptop_queue.recover_interrupted(session, laptop_session, later).requeued == [job.id]
        desktop_sweeping = threading.Thread(target=desktop_sweep)
        desktop_sweeping.start()  # while the laptop's sweep has not committed yet
        desktop_sweeping.join(timeout=30)
        assert not desktop_sweeping.is_alive()  # it passed over the job the laptop is taking back, without waiting
    assert [item.requeued for item in found] == [[]]
    assert [attempt.outcome for attempt in laptop_queue.attempts(job.id)] == [AttemptOutcome.INTERRUPTED]
