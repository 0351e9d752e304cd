"""A data directory on a full disk (a real 2 MB tmpfs): clear messages everywhere, nothing half-written,
and work that hit the full disk runs again once space is back."""

from __future__ import annotations

import errno
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from san_desktop.ai.factory import ProviderSource
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import AttemptOutcome, JobPool, JobStatus, JobType
from san_desktop.core.settings import AISettings
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.queue.store import JobStore
from san_desktop.services.root import Services
from san_desktop.services.scraps import ScrapService
from tests.support.cards import all_cards
from tests.support.clock import FakeClock
from tests.support.jobs import fast_settings
from tests.support.processes import child_env

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounting a 2 MB tmpfs needs root (CI runs as root)"
)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(disk: Path) -> Path:
    """Take every free byte of the disk; delete the returned file to free it again."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:  # unbuffered: closing it has nothing left to write
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def _san(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "san_desktop.cli.main", *args],
        capture_output=True,
        text=True,
        env=child_env(SAN_DATA_DIR=str(data)),
        timeout=120,
        check=False,
    )


def test_every_command_and_the_window_explain_a_full_disk(disk: Path) -> None:
    data = disk / "data"
    assert _san(data, "scrap", "add", "--text", "stored before the disk filled up").returncode == 0
    settings_before = (data / "settings.json").read_bytes() if (data / "settings.json").exists() else None
    filler = _fill(disk)

    for command in (
        ["scrap", "add", "--text", "a new scrap"],
        ["config", "set", "jobs.max_attempts", "4"],
        ["jobs", "sweep"],
        ["jobs", "run", "--until-idle", "--timeout", "30"],
    ):
        result = _san(data, *command)
        assert result.returncode != 0, command
        assert "the disk is full or read-only" in result.stderr, (command, result.stderr)
        assert "Traceback" not in result.stderr, (command, result.stderr)
    assert not (data / "settings.json.tmp").exists()
    after = (data / "settings.json").read_bytes() if (data / "settings.json").exists() else None
    assert after == settings_before
    window = subprocess.run(
        [sys.executable, "-m", "san_desktop", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert window.returncode != 0
    assert "the disk is full or read-only" in window.stderr
    assert "Traceback" not in window.stderr

    filler.unlink()
    assert _san(data, "scrap", "add", "--text", "a new scrap").returncode == 0
    assert _san(data, "jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    cards = json.loads(_san(data, "cards", "list", "--json").stdout)
    assert len(cards) == 2


def test_a_job_that_hits_a_full_disk_runs_again_once_space_is_back(disk: Path) -> None:
    backend = start_backend(disk / "data", kind="gui", log_to_stderr=False)
    try:
        clock = FakeClock()
        queue = JobStore(backend.db, fast_settings(), clock=clock)
        executor = JobExecutor(
            queue,
            build_registry(Services.of_store(queue), ProviderSource(AISettings())),
            backend.require_session(),
            breakers={},
        )
        ScrapService(backend.db, queue).capture("Cards are saved when there is room for them. " * 20)
        claim = queue.claim_next(backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
        assert claim is not None
        filler = _fill(disk)
        executor.run(claim)  # the card cannot be published, nor the failure recorded
        filler.unlink()

        assert executor.drain(JobPool.AI) >= 0  # writes the failure it could not write before
        job = queue.get(claim.job.id)
        assert job.status is JobStatus.PENDING
        assert job.attempts == 0  # a full disk is not the job's fault: no attempt spent
        assert "disk is full" in (job.error_message or "")
        assert job.run_after is not None
        assert job.run_after > clock.now
        assert [attempt.outcome for attempt in queue.attempts(job.id)] == [AttemptOutcome.RATE_LIMITED]

        clock.advance(120)
        executor.drain(JobPool.AI)
        assert queue.get(claim.job.id).status is JobStatus.COMPLETED
        assert len(all_cards(backend.db)) == 1
    finally:
        backend.close()


def test_a_runner_on_a_disk_that_fills_says_so_once_and_runs_again_once_there_is_room(
    disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 23: `san jobs run` logged "A AI worker stopped on an unexpected error" with a traceback at
    every poll (2 s) while the disk was full. Each drain here is one poll of the runner's workers."""
    backend = start_backend(disk / "data", kind="gui", log_to_stderr=False)
    try:
        queue = JobStore(backend.db, fast_settings())
        executor = JobExecutor(
            queue,
            build_registry(Services.of_store(queue), ProviderSource(AISettings())),
            backend.require_session(),
            breakers={},
        )
        ScrapService(backend.db, queue).capture("Cards wait for room on the disk. " * 20)
        filler = _fill(disk)
        with caplog.at_level(logging.INFO, logger="san_desktop.jobs.executor"):
            for _poll in range(5):
                assert executor.drain(JobPool.AI) == 0  # nothing can be claimed: the claim is a write
            full = [record for record in caplog.records if "the disk is full or read-only" in record.getMessage()]
            assert len(full) == 1, caplog.text
            assert full[0].exc_info is None  # a sentence, not a traceback: it is no bug
            assert full[0].getMessage().startswith(f"Cannot write to {backend.data_dir}")
            assert full[0].getMessage().endswith("nothing already stored was lost. Jobs wait until there is room.")
            filler.unlink()
            assert executor.drain(JobPool.AI) == 2  # the card's analysis and the scrap's refinement
        assert "The disk has room again: jobs run again" in caplog.text
        assert len(all_cards(backend.db)) == 1
    finally:
        backend.close()


def test_doctor_says_a_read_only_database_is_read_only(disk: Path) -> None:
    data = disk / "data"
    assert _san(data, "scrap", "add", "--text", "on a disk that becomes read-only").returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    report = json.loads(_san(data, "doctor", "--json").stdout)
    assert report["database_status"] == "up to date, but read-only: SAN Desktop cannot write it"
    added = _san(data, "scrap", "add", "--text", "refused")
    assert added.returncode != 0
    assert "is not writable" in added.stderr
    assert "Traceback" not in added.stderr
