"""A library shared by machines on a PostgreSQL server (two data folders, one database): what the issue asks of
them together."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.core.enums import JobPool, JobType
from san_desktop.core.settings import DATABASE_URL_ENV, SETTINGS_FILE
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from tests.support.jobs import jobs_of
from tests.support.processes import child_env

pytestmark = [pytest.mark.postgresql, pytest.mark.slow]

TEXTS = (
    "SQLite WAL mode lets readers continue while a writer commits to the database.",
    "Raft elects a leader; the leader replicates its log to followers.",
)


def test_eight_processes_on_two_machines_asking_for_a_days_til_make_one_til_and_one_job(
    app: SanApp, tmp_path: Path
) -> None:
    for text in TEXTS:
        app.capture_text(text)
    JobExecutor(
        app.queue, build_registry(app.services, app.providers), app.backend.require_session(), breakers={}
    ).drain(JobPool.AI)
    day = app.til.today()
    url = os.environ[DATABASE_URL_ENV]
    machines = [tmp_path / "laptop", tmp_path / "desktop"]
    for folder in machines:
        folder.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "san_desktop.cli.main", "--data-dir", str(machines[n % 2]), "til", "generate", day],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(**{DATABASE_URL_ENV: url}),
        )
        for n in range(8)
    ]
    job_ids = set()
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        job_ids.add(out.split("job ")[1].split()[0])
    assert len(job_ids) == 1  # every caller got the first one's job
    assert [job.id for job in jobs_of(app.queue, JobType.TIL_GENERATION)] == list(job_ids)
    assert [info.local_date for info in app.til.days() if info.status is not None] == [day]


def _san(folder: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "san_desktop.cli.main", "--data-dir", str(folder), *args],
        capture_output=True,
        text=True,
        env=child_env(**{DATABASE_URL_ENV: url}),
        timeout=120,
        check=False,
    )


def test_the_library_keeps_where_tils_go_for_every_machine_and_each_machine_keeps_its_own_pools(
    postgres_library_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    laptop.mkdir()
    desktop.mkdir()
    # the first machine's own choice becomes the library's when it keeps none yet
    (laptop / SETTINGS_FILE).write_text(json.dumps({"github": {"repository": "ana/first"}}), encoding="utf-8")
    assert _san(laptop, postgres_library_url, "scrap", "add", "--text", "VACUUM frees dead rows.").returncode == 0
    shown = _san(desktop, postgres_library_url, "config", "show").stdout
    assert "github.repository = ana/first  (the library's: shared by its machines)" in shown

    said = _san(desktop, postgres_library_url, "config", "set", "github.repository", "team/til")
    assert said.returncode == 0, said.stderr
    assert _san(desktop, postgres_library_url, "config", "set", "jobs.ai_pool_size", "4").returncode == 0

    laptop_settings = _san(laptop, postgres_library_url, "config", "show").stdout
    assert "github.repository = team/til" in laptop_settings
    assert "jobs.ai_pool_size = 2" in laptop_settings  # the desktop's pools are the desktop's
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_library_url)
    with open_app(laptop, kind="cli", log_to_stderr=False) as app:
        assert app.settings.github.repository == "team/til"
        assert app.settings.jobs.ai_pool_size == 2
