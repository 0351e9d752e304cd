"""What a PostgreSQL server said as a connection was being made, in words (``explained``): a server going away
(shutting down, starting, ending the connection it was making) is unreachable for now, so the window waits it
out, where a refusal of the login or of the database is said as such."""

from __future__ import annotations

import psycopg
import pytest

from san_desktop.core.errors import DatabaseServerError, DatabaseUnreachableError
from san_desktop.db.backends.postgres.server import explained

AT = 'connection failed: connection to server at "127.0.0.1", port 5432 failed: '


@pytest.mark.parametrize(
    "said",
    [
        "FATAL:  terminating connection due to administrator command",
        "FATAL:  the database system is shutting down",
        "FATAL:  the database system is starting up",
        "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
    ],
)
def test_a_server_going_away_as_the_connection_is_made_is_unreachable(said: str) -> None:
    found = explained(psycopg.OperationalError(AT + said), "library on 127.0.0.1")
    assert isinstance(found, DatabaseUnreachableError)


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ('FATAL:  password authentication failed for user "san"', 'refused the password of user "san"'),
        ('FATAL:  database "san" does not exist', "does not exist"),
        ("FATAL:  too many connections for role", "refused the connection"),
    ],
)
def test_a_refusal_is_said_as_one(said: str, words: str) -> None:
    found = explained(psycopg.OperationalError(AT + said), "library on 127.0.0.1")
    assert isinstance(found, DatabaseServerError)
    assert not isinstance(found, DatabaseUnreachableError)
    assert words in str(found)
