"""``san export all FILE.zip`` and ``san import FILE.zip``: a full backup of the library and its restore into
an empty data folder (``cli.export`` and ``cli.imports`` take these handlers into their commands). The
handlers are thin: ``transfer.backup`` and ``transfer.restore`` do the work (the same calls a window would
make)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from san_desktop.cli.common import Progress, print_json


def add_export_all_parser(export_subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from san_desktop.cli.export import add_dry_run, add_overwrite

    every = export_subcommands.add_parser(
        "all",
        help="a full backup: the database, settings and TIL files in one zip (while the app may be open)",
        description="Back up the whole library into one zip: the database (a consistent copy, taken even while "
        "the app is open and writing), settings.json and every file the library refers to. Secrets stay in "
        "the keyring and are not in it. `san import FILE.zip` restores it into an empty data folder. An existing "
        "FILE.zip is replaced only with --overwrite, once the new one is whole.",
    )
    every.add_argument("path", metavar="FILE.zip", type=Path, help="the zip to write (a new file, unless --overwrite)")
    add_overwrite(every)
    add_dry_run(every)
    every.add_argument("--json", action="store_true")
    every.set_defaults(handler=export_all_command)


def export_all_command(args: argparse.Namespace) -> int:
    from san_desktop.cli.export import target_path
    from san_desktop.core.paths import resolve_data_dir
    from san_desktop.transfer.backup import export_all, plan_export_all

    data_dir, path = resolve_data_dir(args.data_dir), target_path(args.path)
    if args.dry_run:
        plan = plan_export_all(data_dir, path, overwrite=args.overwrite)
        if args.json:
            print_json(plan)
        else:
            print(plan.summary)
        return 0
    with Progress("Backing up", sizes=True, quiet=args.json) as progress:
        summary = export_all(data_dir, path, overwrite=args.overwrite, progress=progress)
    if args.json:
        print_json(summary)
        return 0
    print(summary.summary)
    if summary.missing_files:
        print(
            f"{len(summary.missing_files)} file(s) the library refers to were already missing and are not in it: "
            + ", ".join(summary.missing_files[:5]),
            file=sys.stderr,
        )
    return 0


def restore_command(args: argparse.Namespace) -> int:
    from san_desktop.core.paths import resolve_data_dir
    from san_desktop.transfer.restore import restore_backup

    # absolute, not resolved: a symbolic link named here is refused, not followed
    path, data_dir = args.path.expanduser().absolute(), resolve_data_dir(args.data_dir)
    with Progress("Checking" if args.dry_run else "Restoring", sizes=True, quiet=args.json) as progress:
        summary = restore_backup(path, data_dir, dry_run=args.dry_run, progress=progress)
    if args.json:
        print_json(summary)
        return 0
    if args.dry_run:
        print(f"Would restore {summary.path} into {summary.data_dir}: {summary.described()}.")
        print("Every member was read and its checksum checked; the database's own check runs when it is restored.")
        print("Nothing was written.")
        return 0
    print(f"Restored {summary.path} into {summary.data_dir}: {summary.described()}.")
    print("SAN Desktop brings it to this version's schema when it opens it.")
    return 0
