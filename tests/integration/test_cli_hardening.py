"""The command line against hostile and clumsy use: each case as it was reported, in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from san_desktop.core.paths import database_path
from san_desktop.db.backends.sqlite.engine import choose_driver
from san_desktop.db.backends.sqlite.migrate import read_revision
from san_desktop.db.migrate import head_revision
from tests.support.db import migrate_to, raw_connection
from tests.support.openai_server import fake_openai_server
from tests.support.processes import child_env, run_san

SAN = [sys.executable, "-m", "san_desktop.cli.main"]


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout


# --- 1. unbounded reads ---------------------------------------------------------------------------


# `san` that reports its own peak memory (VmHWM: the high-water mark of this program's memory; the
# rusage of a child would count the forking test process's memory from before the exec)
MEASURED_SAN = """
import atexit, sys
def report():
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    sys.__stderr__.write(f"PEAK_KIB {peak}\\n")
atexit.register(report)
from san_desktop.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _peak_kib(stderr: str) -> int:
    return int(next(line.split()[1] for line in stderr.splitlines() if line.startswith("PEAK_KIB")))


def test_endless_standard_input_is_refused_with_bounded_memory(data_dir: Path) -> None:
    with (
        subprocess.Popen(["yes"], stdout=subprocess.PIPE) as endless,
        subprocess.Popen(
            [sys.executable, "-c", MEASURED_SAN, "scrap", "add", "-"],
            stdin=endless.stdout,
            stderr=subprocess.PIPE,
            env=child_env(),
        ) as child,
    ):
        assert endless.stdout is not None
        endless.stdout.close()  # the child holds the only reading end
        _out, err = child.communicate(timeout=120)
        endless.kill()
    stderr = err.decode()
    assert child.returncode == 1, stderr
    assert "too large" in stderr
    assert _peak_kib(stderr) < 200_000  # the child never held much more than the limit


def test_a_200_mb_standard_input_is_refused_without_holding_it(data_dir: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", MEASURED_SAN, "scrap", "add", "-"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    ) as child:

        def feed() -> None:
            assert child.stdin is not None
            block = b"lorem ipsum " * 87_000  # ~1 MB
            try:
                for _ in range(200):
                    child.stdin.write(block)
            except (BrokenPipeError, OSError):
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        assert child.stderr is not None
        stderr = child.stderr.read().decode()
        child.wait(120)
        writer.join(30)
    assert child.returncode == 1, stderr
    assert "too large" in stderr
    assert _peak_kib(stderr) < 200_000


def test_a_symlink_to_dev_zero_and_a_fifo_are_refused(tmp_path: Path, data_dir: Path) -> None:
    link = tmp_path / "z.txt"
    link.symlink_to("/dev/zero")
    fifo = tmp_path / "f.txt"
    os.mkfifo(fifo)
    for path in (link, fifo):
        result = run_san("scrap", "add", "--file", str(path), timeout=60)
        assert result.returncode == 1
        assert "not a regular file" in result.stderr
        _no_traceback(result)


# --- 3. a damaged database ------------------------------------------------------------------------


def _damage(data_dir: Path) -> bytes:
    """A real database with 16 KB of random bytes written into the middle of its table data."""
    assert run_san("scrap", "add", "--text", "the first scrap").returncode == 0
    path = database_path(data_dir)
    with raw_connection(path) as conn:  # enough pages that the middle of the file is table data
        for n in range(400):
            conn.execute(
                "INSERT INTO scraps (id, source_type, content, content_hash, created_at) VALUES (?, 'TEXT', ?, ?, ?)",
                (f"id-{n}", "words " * 200, f"hash-{n}", "2026-01-01 00:00:00.000000"),
            )
    with raw_connection(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(os.urandom(16384))
    return path.read_bytes()


def test_a_damaged_database_is_refused_everywhere_and_never_written(data_dir: Path) -> None:
    damaged = _damage(data_dir)
    path = database_path(data_dir)

    doctor = run_san("doctor", "--json")
    assert doctor.returncode == 0
    assert "damaged" in json.loads(doctor.stdout)["database_status"]
    for command in (["scrap", "add", "--text", "one more"], ["jobs", "sweep"], ["jobs", "run", "--until-idle"]):
        result = run_san(*command, timeout=60)
        assert result.returncode == 4, (command, result.stderr)
        assert "is damaged" in result.stderr
        assert "There is no backup beside it" in result.stderr
        _no_traceback(result)
    window = subprocess.run(
        [sys.executable, "-m", "san_desktop", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert window.returncode == 4
    assert "is damaged" in window.stderr
    assert path.read_bytes() == damaged


def test_the_damage_message_names_the_latest_backup(data_dir: Path) -> None:
    damaged_bytes = _damage(data_dir)
    backup = data_dir / "san.backup-20260101T000000Z-0003_job_error_kind.db"
    backup.write_bytes(b"")
    result = run_san("scrap", "list")
    assert result.returncode == 4
    assert backup.name in result.stderr
    assert database_path(data_dir).read_bytes() == damaged_bytes


# --- 4. migration races ---------------------------------------------------------------------------


@pytest.mark.parametrize("start", ["fresh", "older"])
def test_eight_parallel_commands_migrate_once(data_dir: Path, start: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    if start == "older":
        migrate_to(database_path(data_dir), "0002")
    children = [
        subprocess.Popen(
            [*SAN, "scrap", "add", "--text", f"parallel scrap {n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for n in range(8)
    ]
    for child in children:
        _out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert "Traceback" not in err
    backups = sorted(data_dir.glob("san.backup-*.db"))
    assert len(backups) == (1 if start == "older" else 0)
    assert read_revision(database_path(data_dir), choose_driver()) == head_revision()
    listed = json.loads(run_san("scrap", "list", "--json").stdout)
    assert len(listed) == 8


# --- 6. settings that broke the app ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("jobs.poll_interval_seconds", "nan"),
        ("jobs.max_attempts", "99999999999999999999999"),
        ("ai.timeout_seconds", "inf"),
        ("ai.base_url", "http://"),
    ],
)
def test_config_set_refuses_values_that_would_break_the_app(data_dir: Path, key: str, value: str) -> None:
    result = run_san("config", "set", key, value)
    assert result.returncode == 1
    assert f"Cannot set {key}" in result.stderr
    assert not (data_dir / "settings.json").exists() or "nan" not in (data_dir / "settings.json").read_text()


def test_a_hand_edited_bad_value_falls_back_to_its_default_and_is_reported(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "settings.json").write_text(
        '{"jobs": {"poll_interval_seconds": NaN, "max_attempts": 99999999999999999999999}}', encoding="utf-8"
    )
    assert run_san("scrap", "add", "--text", "still works").returncode == 0
    shown = run_san("config", "show")
    assert shown.returncode == 0
    assert "jobs.poll_interval_seconds must be a finite number, not nan" in shown.stderr
    assert "jobs.poll_interval_seconds = 2.0" in shown.stdout
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    assert len(json.loads(run_san("cards", "list", "--json").stdout)) == 1


# --- 7. terminal escape injection -----------------------------------------------------------------

HOSTILE = "Escapes\x1b]0;pwned\x07 and \x1b[2J and \x1b]52;c;ZWNobyBwd25lZA==\x07 and \u202eevil"


def test_user_text_is_printed_inert_and_json_stays_exact(data_dir: Path) -> None:
    assert run_san("scrap", "add", "--text", HOSTILE).returncode == 0
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0
    card_id = json.loads(run_san("cards", "list", "--json").stdout)[0]["id"]
    for command in (["scrap", "list"], ["cards", "list"], ["cards", "show", card_id]):
        result = run_san(*command)
        assert result.returncode == 0
        for forbidden in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert forbidden not in result.stdout, (command, result.stdout)
    exact = json.loads(run_san("scrap", "list", "--json").stdout)
    assert exact[0]["content"] == HOSTILE


# --- 8. odd command lines -------------------------------------------------------------------------


def test_invalid_utf8_on_the_command_line_is_refused(data_dir: Path) -> None:
    result = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"san_desktop.cli.main", b"scrap", b"add", b"--text", b"caf\xff"],
        capture_output=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert b"not valid text" in result.stderr
    assert b"Traceback" not in result.stderr


def test_closed_standard_input_is_explained(data_dir: Path) -> None:
    result = subprocess.run(
        [*SAN, "scrap", "add", "-"], capture_output=True, text=True, env=child_env(), timeout=60, check=False,
        stdin=subprocess.DEVNULL, pass_fds=(), preexec_fn=lambda: os.close(0),
    )  # fmt: skip
    assert result.returncode == 1
    assert "Standard input is closed" in result.stderr
    _no_traceback(result)


@pytest.mark.parametrize(
    "arguments",
    [
        ["scrap", "list", "--limit", "99999999999999999999"],
        ["cards", "list", "--limit", "0"],
        ["jobs", "run", "--timeout", "nan"],
        ["jobs", "run", "--timeout", "inf"],
        ["jobs", "run", "--timeout", "1e10"],
        ["jobs", "run", "--timeout", "-5"],
    ],
)
def test_out_of_range_numbers_are_usage_errors(arguments: list[str]) -> None:
    result = run_san(*arguments)
    assert result.returncode == 2
    assert "must be" in result.stderr
    _no_traceback(result)


def test_a_text_may_start_with_a_dash(data_dir: Path) -> None:
    result = run_san("scrap", "add", "--json", "--text", "-v is verbose in most tools")
    assert result.returncode == 0, result.stderr
    scrap_id = json.loads(result.stdout)["scrap_id"]
    listed = json.loads(run_san("scrap", "list", "--json").stdout)
    assert listed[0]["id"] == scrap_id
    assert listed[0]["content"] == "-v is verbose in most tools"


# --- 9. small lies --------------------------------------------------------------------------------


def test_doctor_says_what_the_app_would_do(data_dir: Path, tmp_path: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = database_path(data_dir)
    migrate_to(path, "head")
    with raw_connection(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'abc_newer'")
    newer = json.loads(run_san("doctor", "--json").stdout)["database_status"]
    assert newer.startswith("refused: newer than this version")
    path.unlink()
    with raw_connection(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
    foreign = json.loads(run_san("doctor", "--json").stdout)["database_status"]
    assert foreign.startswith("refused:")
    assert "no SAN Desktop schema revision" in foreign


def test_scrap_add_refuses_a_newer_database_and_writes_nothing(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = database_path(data_dir)
    migrate_to(path, "head")
    with raw_connection(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'abc_newer'")
    result = run_san("scrap", "add", "--text", "never stored")
    assert result.returncode == 4
    assert "abc_newer" in result.stderr
    _no_traceback(result)
    with raw_connection(path) as conn:
        assert conn.execute("SELECT count(*) FROM scraps").fetchone()[0] == 0
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "abc_newer"
    assert list(data_dir.glob("san.backup-*.db")) == []


def test_until_idle_says_what_still_waits_and_can_wait_for_it(data_dir: Path) -> None:
    with fake_openai_server() as server:
        data_dir.mkdir(parents=True, exist_ok=True)
        settings = {
            "ai": {"provider": "openai", "base_url": server.url, "chat_model": "m", "embedding_model": "e"},
            "jobs": {"backoff_base_seconds": 1.0, "poll_interval_seconds": 0.1},
        }
        (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        assert run_san("scrap", "add", "--text", "Retries wait for their backoff.").returncode == 0
        server.behaviour = "500"
        first = run_san("jobs", "run", "--until-idle", "--timeout", "60")
        assert first.returncode == 0
        assert "2 job(s) wait for a retry or a rate limit" in first.stderr
        assert "--wait-retries" in first.stderr
        server.behaviour = "ok"
        second = run_san("jobs", "run", "--until-idle", "--wait-retries", "--timeout", "60")
        assert second.returncode == 0, second.stderr
        assert "wait for a retry" not in second.stderr
    assert len(json.loads(run_san("cards", "list", "--json").stdout)) == 1
