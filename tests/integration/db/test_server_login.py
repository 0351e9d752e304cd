"""A server that refuses the login says so, naming the user and what to do about its password; it is not
called unreachable (nothing about hosts and firewalls), and the password is never repeated."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from san_desktop.core.errors import DatabaseServerError
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.db.database import open_server_database
from tests.support.postgres import PostgresServer
from tests.support.processes import child_env, run_python

WRONG = "not-the-Password-7"


@pytest.fixture
def password_url(postgres_server: PostgresServer) -> str:
    """A database owned by a role of this test that logs in with a password only."""
    return postgres_server.add_password_login(f"ana_{uuid.uuid4().hex[:12]}", "the-right-one")


def test_a_wrong_password_is_said_to_be_refused_for_that_user(password_url: str, tmp_path: Path) -> None:
    user = password_url.split("//", 1)[1].split("@", 1)[0]
    with pytest.raises(DatabaseServerError) as refused:
        open_server_database(password_url, tmp_path, password=WRONG)
    said = str(refused.value)
    assert f'refused the password of user "{user}"' in said
    assert "san config set database.password" in said
    assert "cannot be reached" not in said
    assert "firewall" not in said
    assert WRONG not in said


def test_no_password_at_all_is_said_too(password_url: str, tmp_path: Path) -> None:
    with pytest.raises(DatabaseServerError, match="asks for a password, and none was given") as refused:
        open_server_database(password_url, tmp_path)
    assert "cannot be reached" not in str(refused.value)


def test_the_command_line_says_it_in_one_sentence(password_url: str, data_dir: Path) -> None:
    done = run_python(
        ["-m", "san_desktop.cli.main", "scrap", "add", "--text", "VACUUM reclaims dead rows."],
        env=child_env(**{DATABASE_URL_ENV: password_url, "PGPASSWORD": WRONG}),
    )
    assert done.returncode == 4
    assert "refused the password of user" in done.stderr
    assert "Traceback" not in done.stderr
    assert WRONG not in done.stderr + done.stdout
