"""``san doctor``."""

from __future__ import annotations

import argparse

from san_desktop.cli.common import print_json
from san_desktop.core.paths import resolve_data_dir


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser("doctor", help="show what this installation runs on")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from san_desktop.services import diagnostics

    report = diagnostics.collect(resolve_data_dir(args.data_dir))
    if args.json:
        print_json(report.as_dict())
        return 0
    keyring_line = report.keyring_backend
    if not report.keyring_usable:
        keyring_line += f" — NOT usable: {report.keyring_message}"
    rows = [
        ("SAN Desktop", report.app_version),
        ("Python", f"{report.python_version} ({report.python_executable})"),
        ("Platform", report.platform),
        ("SQLite driver", f"{report.sqlite_driver} (SQLite {report.sqlite_version})"),
        ("stdlib sqlite3 loads extensions", "yes" if report.stdlib_sqlite_loads_extensions else "no"),
        ("sqlite-vec", report.sqlite_vec_version),
        ("Data directory", report.data_dir),
        ("Database", f"{report.database_file} ({report.database_kind})"),
        *([("Database server", report.database_server)] if report.database_server else []),
        ("Database revision", report.database_revision or "none"),
        ("Code head revision", report.code_head_revision),
        ("Database status", report.database_status),
        ("Keyring", keyring_line),
        (
            "Embedded model",
            report.embedded_model if report.embedded_model_loads else f"NOT loaded: {report.embedded_model}",
        ),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label + ':':<{width + 2}}{value}")
    return 0
