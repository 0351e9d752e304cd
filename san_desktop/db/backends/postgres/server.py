"""A library on a PostgreSQL server: the engine for its URL, bringing its schema to head, and what ``san
doctor`` says of it.

Every connection works in UTC (times are ``timestamp with time zone``; revision 0019) and gives up on a server
that does not answer within ``CONNECT_TIMEOUT_SECONDS`` rather than freezing whoever asked. Schema upgrades
from several machines at once take turns on a PostgreSQL advisory lock (the file lock of a SQLite library
cannot be seen from another machine). No file backup is taken before an upgrade: the server's data is its
administrator's to back up (``pg_dump``).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import psycopg
import sqlalchemy as sa
from psycopg import sql

from san_desktop.core.errors import (
    DatabaseLockedError,
    DatabaseServerError,
    DatabaseTooNewError,
    DatabaseUnreachableError,
    LibraryNotUpgradedError,
    NoLibraryYetError,
    NotADatabaseError,
)
from san_desktop.core.timeutil import utcnow
from san_desktop.db.migrate import MigrationResult, alembic_config, head_revision, known_revisions

if TYPE_CHECKING:
    from san_desktop.db.backends.base import Notified

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 10
# pg_advisory_lock key of schema upgrades ("SAN" in ASCII): one machine upgrades, the others wait
MIGRATION_LOCK_KEY = 0x53414E
EXTENSIONS = ("vector", "pg_trgm")  # pgvector for similar cards, pg_trgm for word-part search


def describe(url: sa.URL | str) -> str:
    """The database as people name it, never with its password: ``san on db.example.org:5432``."""
    parsed = sa.make_url(url)
    where = parsed.host or "localhost"
    if parsed.port:
        where = f"{where}:{parsed.port}"
    return f"{parsed.database or '(default)'} on {where}"


def make_server_engine(url: sa.URL | str, *, password: str | None = None, echo: bool = False) -> sa.Engine:
    """An engine for a PostgreSQL URL (``postgresql+psycopg://…``; a bare ``postgresql://`` gets psycopg).
    ``password``: from the keyring or PGPASSWORD (never in the URL kept in settings; without one, libpq
    looks in ~/.pgpass)."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() not in ("postgresql", "postgres"):
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    if parsed.get_driver_name() != "psycopg":
        parsed = parsed.set(drivername="postgresql+psycopg")
    connect_args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS, "options": "-c timezone=UTC"}
    if password:
        connect_args["password"] = password
    engine = sa.create_engine(parsed, connect_args=connect_args, pool_pre_ping=True, echo=echo)

    return engine


def read_revision(conn: sa.Connection) -> tuple[str | None, bool]:
    """The stored schema revision (None: no schema yet) and whether the database holds any table."""
    tables = set(sa.inspect(conn).get_table_names())
    revision = None
    if "alembic_version" in tables:
        revision = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one_or_none()
    return revision, bool(tables)


def migrate_server(engine: sa.Engine) -> MigrationResult:
    """Bring the server database to the newest schema this code knows; refuse one that is newer, or that
    holds tables but no SAN Desktop schema, without changing it."""
    head = head_revision()
    where = describe(engine.url)
    with engine.connect() as conn:
        conn.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})")
        conn.commit()
        try:
            current, has_tables = read_revision(conn)
            conn.rollback()
            if current is not None and current not in known_revisions():
                raise DatabaseTooNewError(where, current, head)
            if current is None and has_tables:
                raise NotADatabaseError(where, "it holds tables but no SAN Desktop schema revision")
            if current != head:
                from alembic import command

                with conn.begin():
                    config = alembic_config()
                    config.attributes["connection"] = conn
                    command.upgrade(config, "head")
                log.info("Database %s migrated from %s to %s", where, current or "nothing", head)
        finally:
            conn.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})")
            conn.commit()
    return MigrationResult(current, head, None)


def read_schema(engine: sa.Engine) -> MigrationResult:
    """Where the server database stands, for a command that only reads: at this version's schema, or it raises
    (``NoLibraryYetError`` for an empty database, ``LibraryNotUpgradedError``, ``DatabaseTooNewError``,
    ``NotADatabaseError``); nothing is written, so an empty database stays empty."""
    head = head_revision()
    where = describe(engine.url)
    with engine.connect() as conn:
        current, has_tables = read_revision(conn)
    if current is not None and current not in known_revisions():
        raise DatabaseTooNewError(where, current, head)
    if current is None and has_tables:
        raise NotADatabaseError(where, "it holds tables but no SAN Desktop schema revision")
    if current is None:
        raise NoLibraryYetError(where)
    if current != head:
        raise LibraryNotUpgradedError(where, current, head)
    return MigrationResult(current, head, None)


_UNREACHABLE = (
    "cannot be reached",
    "Check that the server runs and that this machine can reach it (host, port, firewall); nothing was changed",
)
_LOGIN = (
    "refused the login",
    "Check the user in database.url, and store its password with `san config set database.password` (or set "
    "PGPASSWORD, or use ~/.pgpass)",
)
# SQLSTATE (or its two-letter class) -> (problem, remedy)
_BY_STATE = {
    "08": _UNREACHABLE,
    "57P01": _UNREACHABLE,  # the server shut down
    "57P02": _UNREACHABLE,
    "57P03": _UNREACHABLE,  # it cannot take connections now (starting, recovering)
    "28": _LOGIN,
    "3D000": ("does not exist", "Create it on the server (createdb), or correct database.url"),
    "42501": (
        "does not let this user do what SAN Desktop needs",
        "Grant the user the rights to create tables in the database (or make it the database's owner)",
    ),
    "53": ("is out of room on its server", "Free disk space (or memory) on the database server, then try again"),
}


_PASSWORD_REMEDY = (
    "Store the right password with `san config set database.password` (or set PGPASSWORD, or use ~/.pgpass); "
    "nothing was changed"
)
# A server that refuses a connection answers before any session exists, so libpq hands on its words without a
# SQLSTATE: what it refused is read from them ("FATAL:" says the server answered, so it can be reached).
_FOR_USER = re.compile(r'for user "([^"]{1,200})"')
_REFUSED_AT_CONNECT = (
    (re.compile(r"password authentication failed", re.I), "refused the password{of_user}", _PASSWORD_REMEDY),
    (
        re.compile(r"no password supplied|password is required|fe_sendauth", re.I),
        "asks for a password{of_user}, and none was given",
        _PASSWORD_REMEDY,
    ),
    (re.compile(r'authentication failed|pg_hba\.conf|role "[^"]*" does not exist', re.I), *_LOGIN),
    # (57P03: starting, stopping, recovering; an answer, but no refusal: it passes)
    # (57P01: a server shutting down ends the connection it was just making)
    (
        re.compile(r"the database system is|not (yet )?accepting connections|terminating connection due to", re.I),
        *_UNREACHABLE,
    ),
    (
        re.compile(r'database "[^"]*" does not exist', re.I),
        "does not exist",
        "Create it on the server (createdb), or correct database.url",
    ),
)


def _refused_at_connect(message: str) -> tuple[str, str] | None:
    """What a server that answered refused, from its words (``connection failed: ... FATAL: ...``)."""
    user = _FOR_USER.search(message)
    for pattern, problem, remedy in _REFUSED_AT_CONNECT:
        if pattern.search(message):
            return problem.format(of_user=f' of user "{user.group(1)}"' if user else ""), remedy
    if "FATAL:" in message:  # another refusal, perhaps in the server's language: it answered, though
        return "refused the connection", "Check the user and database in database.url; nothing was changed"
    return None


def explained(exc: BaseException, where: str) -> Exception:
    """A server's condition that is not a bug in words that say what to do (``DatabaseServerError``,
    ``DatabaseLockedError``), or ``exc`` itself. The cause is the server's own words (never a password:
    libpq does not repeat it)."""
    original = getattr(exc, "orig", None) or exc
    state = str(getattr(original, "sqlstate", None) or "")
    text = " ".join(str(original).split())
    cause = (str(original).strip().splitlines() or [""])[0][:300]
    if state == "55P03":  # lock_not_available
        return DatabaseLockedError(where)
    said = _BY_STATE.get(state) or _BY_STATE.get(state[:2])
    if said is None and not state and type(original).__name__ == "OperationalError":
        said = _refused_at_connect(text)
        if said is not None:
            cause = text.rpartition("FATAL:")[2].strip()[:300] or cause
        else:
            said = _UNREACHABLE  # no answer at all: refused, timed out, unknown host
            cause = cause.rpartition(" failed: ")[2] or cause  # (libpq names the host and port: said already)
    if said is None:
        return exc if isinstance(exc, Exception) else RuntimeError(str(exc))
    if said == _UNREACHABLE:
        return DatabaseUnreachableError(where, said[0], said[1], cause)
    return DatabaseServerError(where, said[0], said[1], cause)


@dataclass(frozen=True)
class ServerFacts:
    """What ``san doctor`` reports of a server database."""

    where: str
    server_version: str
    extensions: dict[str, str | None]  # name -> installed version, or None: available but not installed
    missing: tuple[str, ...]  # wanted extensions the server does not have at all


def server_facts(engine: sa.Engine) -> ServerFacts:
    with engine.connect() as conn:
        version = str(conn.exec_driver_sql("SHOW server_version").scalar_one())
        rows = conn.execute(
            sa.text("SELECT name, installed_version FROM pg_available_extensions WHERE name = ANY(:names)"),
            {"names": list(EXTENSIONS)},
        ).all()
    available = {str(name): (str(installed) if installed else None) for name, installed in rows}
    return ServerFacts(
        where=describe(engine.url),
        server_version=version,
        extensions=available,
        missing=tuple(name for name in EXTENSIONS if name not in available),
    )


# round trips a measure of the server's clock takes; the quickest one counts
CLOCK_SAMPLES = 5


class ServerClock:
    """The server's time, told without asking it: this machine's clock plus the difference measured when the
    library opened, and again at every recovery sweep (``measure``, off the GUI thread). Leases and job
    times of machines sharing a library are then on one clock, whatever their own clocks say.

    A measure is only as good as its round trip is short (the server's answer lies somewhere within it): a
    process starting up or a loaded machine can hold one reply for seconds, which would set this clock that
    far off. So each measure takes several and keeps the quickest."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self.offset = timedelta(0)
        self.measure()

    def measure(self) -> None:
        with self._engine.connect() as conn:
            samples = [self._sample(conn) for _ in range(CLOCK_SAMPLES)]
        before, server, after = min(samples, key=lambda sample: sample[2] - sample[0])
        self.offset = server - (before + (after - before) / 2)

    @staticmethod
    def _sample(conn: sa.Connection) -> tuple[datetime, datetime, datetime]:
        """This machine's time before asking, the server's answer, and this machine's time after."""
        before = utcnow()
        server = conn.exec_driver_sql("SELECT clock_timestamp()").scalar_one()
        return before, server.astimezone(UTC), utcnow()

    def __call__(self) -> datetime:
        return utcnow() + self.offset


# notifications that arrive together are answered once, after at most this long
NOTICE_GATHER_SECONDS = 0.2
RECONNECT_SECONDS = 5.0


class ServerNotices:
    """Listens to the library's channels on a connection of its own, on a daemon thread, and calls each
    channel's callbacks (from that thread) with the payloads of the notifications that arrived together: what
    another machine or process did is known at once, without polling. Once a channel is listened to (the
    first time, and again after a lost connection was made again), its callbacks are called with None: what
    was written before is unknown."""

    def __init__(self, engine: sa.Engine, own: Collection[int] = frozenset()) -> None:
        """``own``: the server's process ids of this process's connections (kept up to date by their owner):
        what this process wrote it announced itself, and is not told back."""
        self._own = own
        self._connect_args = {
            **engine.url.translate_connect_args(username="user", database="dbname"),
            **{key: value for key, value in engine.url.query.items() if isinstance(value, str)},
        }
        self._callbacks: dict[str, list[Notified]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set while the connection listens (tests wait for it)

    def listen(self, channel: str, callback: Notified) -> None:
        with self._lock:
            self._callbacks.setdefault(channel, []).append(callback)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="san-server-notices", daemon=True)
                self._thread.start()

    def unlisten(self, channel: str, callback: Notified) -> None:
        """No more calls of ``callback`` (the connection keeps listening: cheap, and others may listen too)."""
        with self._lock:
            callbacks = self._callbacks.get(channel, [])
            if callback in callbacks:
                callbacks.remove(callback)

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _call(self, arrived: dict[str, frozenset[str] | None]) -> None:
        with self._lock:
            calls = [
                (callback, payloads)
                for channel, payloads in arrived.items()
                for callback in self._callbacks.get(channel, ())
            ]
        for callback, payloads in calls:
            try:
                callback(payloads)
            except Exception:
                log.exception("A listener of the database's notifications failed")

    def _run(self) -> None:
        said = False  # a lost connection is said once, not at every try to connect again
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    **self._connect_args,
                    autocommit=True,
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    options="-c timezone=UTC",
                ) as conn:
                    listened: set[str] = set()
                    while not self._stop.is_set():
                        with self._lock:
                            wanted = set(self._callbacks) - listened
                        for channel in sorted(wanted):
                            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                            listened.add(channel)
                        if wanted:
                            # what was written before this connection listened (the first time: between the
                            # listener's asking and now; after a reconnect: meanwhile) is unknown
                            self._call(dict.fromkeys(wanted))
                        if said:
                            log.info("Listening to the database's notifications again")
                            said = False
                        self.listening.set()
                        arrived: dict[str, set[str]] = {}
                        for notice in conn.notifies(timeout=NOTICE_GATHER_SECONDS):
                            if notice.pid not in self._own:
                                arrived.setdefault(notice.channel, set()).add(notice.payload)
                        if arrived:
                            self._call({channel: frozenset(payloads) for channel, payloads in arrived.items()})
            except psycopg.Error as exc:
                self.listening.clear()
                if not said:
                    first_line = (str(exc).strip().splitlines() or [""])[0]
                    log.warning("Lost the database's notifications (%s); connecting again", first_line)
                    said = True
                self._stop.wait(RECONNECT_SECONDS)
        self.listening.clear()
