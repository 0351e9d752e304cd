"""Pointing SAN Desktop at a PostgreSQL server from the command line: `san config set database.url`, the
password kept out of settings.json, and what `san doctor` says of the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV, SETTINGS_FILE
from tests.support.processes import run_san


def _doctor() -> dict[str, object]:
    done = run_san("doctor", "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_a_url_with_a_password_is_refused_and_one_without_is_kept(data_dir: Path) -> None:
    refused = run_san("config", "set", "database.url", "postgresql://ana:hunter2@db.example.org/san")
    assert refused.returncode != 0
    assert "keep the password out of the URL" in refused.stderr
    assert "hunter2" not in refused.stderr + refused.stdout
    assert not (data_dir / SETTINGS_FILE).exists() or "hunter2" not in (data_dir / SETTINGS_FILE).read_text()

    kept = run_san("config", "set", "database.url", "postgresql://ana@db.example.org:6543/san")
    assert kept.returncode == 0, kept.stderr
    settings = json.loads((data_dir / SETTINGS_FILE).read_text())
    assert settings["database"]["url"] == "postgresql://ana@db.example.org:6543/san"
    shown = run_san("config", "show")
    assert "database.url = postgresql://ana@db.example.org:6543/san" in shown.stdout
    assert "database.password = not set" in shown.stdout


def test_a_url_that_is_no_postgresql_url_is_refused() -> None:
    refused = run_san("config", "set", "database.url", "mysql://db.example.org/san")
    assert refused.returncode != 0
    assert "PostgreSQL URL" in refused.stderr


def test_doctor_names_the_server_its_version_and_extensions_before_and_after_the_first_start(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    before = _doctor()
    assert before["database_kind"] == "PostgreSQL server"
    assert str(before["database_server"]).startswith("PostgreSQL ")
    assert "vector" in str(before["database_server"])
    assert "pg_trgm" in str(before["database_server"])
    assert before["database_status"] == "empty (made on first start)"

    assert run_san("scrap", "add", "--text", "VACUUM reclaims dead row versions.").returncode == 0

    after = _doctor()
    assert after["database_status"] == "up to date"
    assert "pg_trgm 1." in str(after["database_server"])  # installed by the first start (revision 0020)


def test_doctor_says_a_server_cannot_be_reached_without_showing_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://ana:s3cret-pw@127.0.0.1:1/san")
    report = _doctor()
    assert "cannot be reached" in str(report["database_status"])
    assert report["database_file"] == "san on 127.0.0.1:1"
    assert "s3cret-pw" not in json.dumps(report)


def test_a_settings_file_naming_no_postgresql_database_is_refused_when_the_library_opens(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schemes a backend opens are the backends' to know: a hand-edited database.url naming another database
    is refused as the library opens, with a sentence, rather than set aside for the data folder's own file."""
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)  # (the settings file's URL, not a test server's)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / SETTINGS_FILE).write_text(json.dumps({"database": {"url": "mysql://db.example.org/san"}}))
    refused = run_san("scrap", "add", "--text", "VACUUM reclaims dead row versions.")
    assert refused.returncode != 0
    assert "give a PostgreSQL URL" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not database_path(data_dir).exists()  # no library file made in the server's place
    assert "give a PostgreSQL URL" in str(_doctor()["database_status"])
