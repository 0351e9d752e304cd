"""``san db copy``: move a library between the data folder's SQLite file and a PostgreSQL server
(``transfer.db_copy`` does the work)."""

from __future__ import annotations

import argparse
from pathlib import Path

from san_desktop.cli.common import Progress, print_json
from san_desktop.core.errors import SanError
from san_desktop.db.backends import EXAMPLE_URL, check_url


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = commands.add_parser("db", help="the library's database: copy it to or from a PostgreSQL server")
    sub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    copy = sub.add_parser(
        "copy",
        help="copy this data folder's library into an empty PostgreSQL database, or a server's library into a "
        "new data folder",
        description="--to URL: copy this data folder's SQLite library (read only, left as it is) into the empty "
        "database at URL, then compare every table's rows and checksums; point database.url at it afterwards. "
        "--from URL --into DIR: copy the library at URL into the new data folder DIR (a backup, or to leave the "
        "server); `san --data-dir DIR` opens it. The password comes from the keyring (`san config set "
        "database.password`), PGPASSWORD or ~/.pgpass, never from the URL.",
    )
    way = copy.add_mutually_exclusive_group(required=True)
    way.add_argument("--to", metavar="URL", help=f"an empty PostgreSQL database: {EXAMPLE_URL}")
    way.add_argument("--from", dest="source", metavar="URL", help="a PostgreSQL database holding a library")
    copy.add_argument("--into", metavar="DIR", type=Path, help="with --from: the new data folder")
    copy.add_argument("--json", action="store_true")
    copy.set_defaults(handler=copy_command)


def copy_command(args: argparse.Namespace) -> int:
    from san_desktop.core.paths import ensure_data_dir, resolve_data_dir
    from san_desktop.core.settings import check_database_url
    from san_desktop.services.secrets import database_password
    from san_desktop.transfer.db_copy import copy_from_server, copy_to_server

    url = args.to or args.source
    try:
        check_database_url(url)
        check_url(url)
    except ValueError as exc:
        raise SanError(f"Cannot copy: {exc}.") from None
    if args.to and args.into is not None:
        raise SanError("--into goes with --from (the data folder a server's library is copied into).")
    if not args.to and args.into is None:
        raise SanError("Say where the copy goes: --into DIR, a new data folder.")
    with Progress("Copying", quiet=args.json) as progress:  # each table's rows as it is copied, on stderr
        if args.to:
            source = resolve_data_dir(args.data_dir)
            summary = copy_to_server(source, url, password=database_password(), progress=progress.say)
        else:
            into = ensure_data_dir(args.into.expanduser().resolve())
            summary = copy_from_server(url, into, password=database_password(), progress=progress.say)
    if args.json:
        print_json({**vars(summary), "total_rows": summary.total_rows})
        return 0
    print(
        f"Copied {summary.total_rows} row(s) in {len(summary.rows)} table(s) and {summary.files} file(s) from "
        f"{summary.source} to {summary.target}; every table's rows and checksum match."
    )
    return 0
