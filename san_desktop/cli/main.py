"""``san``: a command line over the same services as the GUI.

Exit codes: 0 success, 1 an expected error (message on stderr), 2 usage error, 3 another instance holds
the data directory, 4 database problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from san_desktop import APP_NAME, __version__
from san_desktop.core.errors import SanError
from san_desktop.core.paths import resolve_data_dir
from san_desktop.services import diagnostics


def _print_json(data: object) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def cmd_doctor(args: argparse.Namespace) -> int:
    report = diagnostics.collect(resolve_data_dir(args.data_dir))
    if args.json:
        _print_json(report.as_dict())
        return 0
    keyring_line = report.keyring_backend + (
        "" if report.keyring_usable else f" — NOT usable: {report.keyring_message}"
    )
    rows = [
        ("SAN Desktop", report.app_version),
        ("Python", f"{report.python_version} ({report.python_executable})"),
        ("Platform", report.platform),
        ("SQLite driver", f"{report.sqlite_driver} (SQLite {report.sqlite_version})"),
        ("stdlib sqlite3 loads extensions", "yes" if report.stdlib_sqlite_loads_extensions else "no"),
        ("sqlite-vec", report.sqlite_vec_version),
        ("Data directory", report.data_dir),
        ("Database", report.database_file),
        ("Database revision", report.database_revision or "none"),
        ("Code head revision", report.code_head_revision),
        ("Database status", report.database_status),
        ("Keyring", keyring_line),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label + ':':<{width + 2}}{value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="san", description=f"{APP_NAME} command line")
    parser.add_argument("--version", action="version", version=f"san {__version__}")
    parser.add_argument(
        "--data-dir", metavar="DIR", help="data directory (default: $SAN_DATA_DIR or the platform's)"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    doctor = commands.add_parser("doctor", help="show what this installation runs on")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(handler=cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except SanError as exc:
        print(f"san: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
