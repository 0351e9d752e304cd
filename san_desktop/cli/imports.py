"""``san import``: a folder of notes, bookmarks, Pocket, Readwise or Kindle exports into the library as one
batch (with ``--dry-run`` to see what would come in, ``--list`` and ``--undo`` for the batches); a full backup
``.zip`` is restored instead (``cli.backup``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from san_desktop.cli.common import (
    Progress,
    add_list_options,
    open_library,
    print_json,
    print_rows,
    rows_wanted,
    short_time,
)
from san_desktop.core.errors import SanError

KINDS = (
    "markdown",
    "bookmarks",
    "pocket",
    "readwise",
    "kindle",
    "karakeep",
    "linkwarden",
    "omnivore",
    "opml",
    "backup",
)  # transfer.items.ImportKind's values

if TYPE_CHECKING:
    from san_desktop.transfer.import_matching import ItemOutcome


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "import",
        help="import notes, bookmarks and highlights (or restore a backup .zip)",
        description="Import a folder of Markdown notes or an Obsidian vault (SAN's own Markdown export too), a "
        "browser's bookmarks .html, Pocket's ril_export.html or .csv, a Readwise .csv, Kindle's My Clippings.txt, "
        "a Karakeep, Linkwarden or Omnivore export, an OPML list of links, or restore a backup made by `san export "
        "all` into an empty data folder. The kind is told by the content; each import is one batch that --undo "
        "undoes. Every entry is said to be new, updated (a new text of what an earlier import brought), already "
        "there, merged into another, or left out and why: --limit/--all say how many of them are listed; --json "
        "gives them all.",
    )
    parser.add_argument("path", metavar="PATH", type=Path, nargs="?", help="the folder or file to import")
    parser.add_argument("--kind", choices=KINDS, help="what PATH is, when its content does not say")
    parser.add_argument(
        "--dry-run", action="store_true", help="say what would be imported (or, with --undo, undone); write nothing"
    )
    parser.add_argument("--list", action="store_true", help="the imports that can be undone")
    parser.add_argument(
        "--undo",
        metavar="BATCH",
        help="move exactly what the import BATCH brought in to the Trash (restorable), and give what it updated "
        "its text from before",
    )
    add_list_options(parser)
    parser.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    if args.list or args.undo:
        if args.path is not None:
            raise SanError("Give either PATH to import, or --list or --undo, not both.")
        return _list(args) if args.list else _undo(args)
    if args.path is None:
        raise SanError("Name the folder or file to import (or --list, --undo BATCH).")
    from san_desktop.transfer.items import ImportKind
    from san_desktop.transfer.readers import detect_kind

    if args.kind:
        kind = ImportKind(args.kind)
    elif args.path.suffix.lower() == ".zip" and args.path.is_file():
        kind = ImportKind.BACKUP  # the restore says exactly what is wrong with a zip that is not one
    else:
        kind = detect_kind(args.path)
    if kind is ImportKind.BACKUP:
        from san_desktop.cli.backup import restore_command

        return restore_command(args)
    with open_library(args) as app:
        plan = app.read_import(args.path, kind)
        with Progress("Checking" if args.dry_run else "Importing", quiet=args.json) as progress:
            summary = app.store_import(plan, dry_run=args.dry_run, progress=progress).value
    if args.json:
        print_json(summary.as_dict())  # (every entry: a program reads them all)
        return 0
    print(summary.sentence())
    from san_desktop.transfer.import_matching import Outcome

    # many new ones: the others are what to look at (--json lists them all)
    others = [one for one in summary.outcomes if one.outcome is not Outcome.NEW] if summary.imported > 10 else []
    listed = others or list(summary.outcomes)
    print_rows(
        listed,
        args,
        headers=["", "ENTRY", "WHY"],
        cells=_cells,
        empty="Nothing in it to import.",
        noun="entry",
        plural="entries",
        total=len(listed),
        heading="The entries other than new ones:" if others else None,
    )
    if summary.batch_id is not None:
        print(f"batch {summary.batch_id} (undo with: san import --undo {summary.batch_id})")
        print("Their cards are made by the open app, or by `san jobs run --until-idle`.")
    return 0


def _cells(outcome: ItemOutcome) -> list[str]:
    return [outcome.outcome.value, outcome.source_ref, outcome.detail]


def _list(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        batches = app.imports.batches(limit=rows_wanted(args))
    print_rows(
        batches,
        args,
        headers=["BATCH", "WHEN", "KIND", "NEW", "UPDATED", "FROM"],
        cells=lambda b: [
            b.id,
            short_time(b.created_at),
            b.kind.value,
            f"{b.imported}{'' if b.finished else ' (stopped)'}",
            str(b.updated),
            b.source,
        ],
        empty="No import to undo.",
        noun="import",
    )
    return 0


def _undo(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        if args.dry_run:  # what would go, and how much of it was worked on since: nothing is written
            preview = app.undo_import_preview(args.undo)
            if args.json:
                print_json(preview)
            else:
                print(preview.sentence())
            return 0
        trashed = app.undo_import(args.undo).value
    if args.json:
        print_json({"batch": args.undo, "trash_entry": trashed.entry_id, "moved_to_trash": trashed.scrap_ids})
        return 0
    count = len(trashed.scrap_ids)
    print(f"Import {args.undo} undone: {count} scrap{'s' if count != 1 else ''} moved to the Trash.")
    if trashed.entry_id is not None:
        print(f"Restore them with: san trash restore {trashed.entry_id}")
    return 0
