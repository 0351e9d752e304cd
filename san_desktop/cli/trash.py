"""``san trash list|restore ID|empty``: what was deleted (scraps, imports undone), restorable until the Trash is
emptied or ``trash.keep_days`` pass."""

from __future__ import annotations

import argparse
import sys

from san_desktop.cli.common import MAX_ROWS, add_list_options, open_library, print_rows, rows_wanted, short_time
from san_desktop.core.text import preview


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trash = commands.add_parser(
        "trash",
        help="what was deleted: list it, restore it, or delete it for good",
        description="Deleted scraps and undone imports wait in the Trash with their cards, edits, quizzes and "
        "review history, restorable, for trash.keep_days days (30 by default); then they are deleted for good.",
    )
    sub = trash.add_subparsers(dest="trash_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="what the Trash holds, newest first")
    add_list_options(listing)
    listing.set_defaults(handler=cmd_list)
    restore = sub.add_parser("restore", help="bring back one entry of the Trash (an undone import: all of it)")
    restore.add_argument("entry_id", metavar="ID", help="as `san trash list` shows it")
    restore.set_defaults(handler=cmd_restore)
    empty = sub.add_parser("empty", help="delete everything in the Trash for good (asks first)")
    empty.add_argument("--yes", action="store_true", help="do not ask")
    empty.add_argument("--dry-run", action="store_true", help="say what would be deleted; delete nothing")
    empty.set_defaults(handler=cmd_empty)


def cmd_list(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        # (no count: one more than --limit says whether there are more; --all: every entry, however many)
        entries = app.trash.entries(limit=rows_wanted(args) or MAX_ROWS)
    print_rows(
        entries,
        args,
        headers=["ID", "DELETED", "SCRAPS", "CARDS", "QUIZZES", "KEPT UNTIL", "WHAT"],
        cells=lambda entry: [
            entry.id,
            short_time(entry.deleted_at),
            str(entry.scraps),
            str(entry.cards),
            str(entry.quizzes),
            short_time(entry.purge_at),
            preview(entry.describe(), 60),
        ],
        empty="The Trash is empty.",
        noun="entry",
        plural="entries",
    )
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        restored = app.restore_from_trash(args.entry_id).value
    print(restored.sentence())
    return 0


def cmd_empty(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        planned = app.trash.empty(dry_run=True)
        if args.dry_run or not planned.entries:
            print(planned.sentence(dry_run=True))
            return 0
        if not args.yes and not _agreed(f"{planned.question()} [y/N] "):
            print("Nothing was deleted (answer y, or add --yes).")
            return 1
        emptied = app.empty_trash().value
    print(emptied.sentence())
    return 0


def _agreed(question: str) -> bool:
    """The person's answer on standard input (a terminal, or piped); no answer is no."""
    print(question, end="", flush=True)
    answer = sys.stdin.readline(100) if sys.stdin is not None else ""
    if not sys.stdin or not sys.stdin.isatty():
        print()  # (the answer was not echoed)
    return answer.strip().lower() in ("y", "yes")
