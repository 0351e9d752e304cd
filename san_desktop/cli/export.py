"""``san export ...``: the library out of SAN Desktop, to Anki, to Markdown (an Obsidian vault) or its links to a
bookmarks file, or all of it as a backup (``cli.backup``). An existing file is replaced only with ``--overwrite``
(never a link, a folder or a device); ``--dry-run`` checks everything and says what would be written, writing
nothing.

Each format is one subcommand of the ``export`` group: another is added by one more line in ``add_parser``
(its own ``add_<format>`` function beside these)."""

from __future__ import annotations

import argparse
from pathlib import Path

from san_desktop.cli.common import open_library, print_json


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from san_desktop.cli.backup import add_export_all_parser

    export = commands.add_parser("export", help="export the library to Anki, Markdown or bookmarks, or back it all up")
    formats = export.add_subparsers(dest="export_command", metavar="FORMAT", required=True)
    add_anki(formats)
    add_markdown(formats)
    add_bookmarks(formats)
    add_export_all_parser(formats)


def add_anki(formats: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    anki = formats.add_parser(
        "anki",
        help="the recall quizzes (and with --cards the cards) as an Anki package",
        description="Write an Anki package (.apkg) with a deck per category (SAN::<category>). Exporting again "
        "and importing the new package updates the notes imported before instead of adding them twice.",
    )
    anki.add_argument("file", type=Path, metavar="FILE.apkg")
    anki.add_argument("--cards", action="store_true", help="the knowledge cards too, as basic notes")
    add_overwrite(anki)
    add_dry_run(anki)
    anki.add_argument("--json", action="store_true")
    anki.set_defaults(handler=cmd_anki)


def add_markdown(formats: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    markdown = formats.add_parser(
        "markdown",
        help="the cards and TIL notes as Markdown files with front matter (an Obsidian vault)",
        description="Write Cards/<title>.md per card and TIL/<date>.md per day into DIR. Exporting into the same "
        "folder again updates these files; files it did not write (or that you edited) are left as they are. "
        "Nothing below DIR may be a link: a Cards or TIL folder that is one is refused.",
    )
    markdown.add_argument("folder", type=Path, metavar="DIR")
    add_dry_run(markdown)
    markdown.add_argument("--json", action="store_true")
    markdown.set_defaults(handler=cmd_markdown)


def add_bookmarks(formats: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bookmarks = formats.add_parser(
        "bookmarks",
        help="the links as a browser's bookmarks file (HTML), with their cards' tags",
        description="Write the link scraps as a Netscape bookmarks file (.html), which browsers, Karakeep and "
        "Linkwarden import: each link with its title, the time it was captured and its card's tags.",
    )
    bookmarks.add_argument("file", type=Path, metavar="OUT.html")
    add_overwrite(bookmarks)
    add_dry_run(bookmarks)
    bookmarks.add_argument("--json", action="store_true")
    bookmarks.set_defaults(handler=cmd_bookmarks)


def add_overwrite(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the file if it exists (never a link, folder or device)"
    )


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="check, and say what would be written; write nothing")


def target_path(path: Path) -> Path:
    """The file named on the command line, absolute; a link is not resolved (the export refuses it)."""
    return path.expanduser().absolute()


def cmd_anki(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.export_anki(
            target_path(args.file), cards=args.cards, overwrite=args.overwrite, dry_run=args.dry_run
        )
    if args.json:
        print_json(result)
    else:
        print(result.summary)
    return 0


def cmd_markdown(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.export_markdown(args.folder.expanduser(), dry_run=args.dry_run)
    if args.json:
        print_json(result)
    else:
        print(result.summary)
    return 0


def cmd_bookmarks(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.export_bookmarks(target_path(args.file), overwrite=args.overwrite, dry_run=args.dry_run)
    if args.json:
        print_json(result)
    else:
        print(result.summary)
    return 0
