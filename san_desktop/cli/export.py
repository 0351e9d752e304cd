"""``san export ...``: the library out of SAN Desktop, to Anki or to Markdown (an Obsidian vault), or all of it
as a backup (``cli.backup``).

Each format is one subcommand of the ``export`` group: another is added by one more line in ``add_parser``
(its own ``add_<format>`` function beside these)."""

from __future__ import annotations

import argparse
from pathlib import Path

from san_desktop.cli.common import open_library, print_json


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from san_desktop.cli.backup import add_export_all_parser

    export = commands.add_parser("export", help="export the library to Anki or Markdown, or back it all up")
    formats = export.add_subparsers(dest="export_command", metavar="FORMAT", required=True)
    add_anki(formats)
    add_markdown(formats)
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
    anki.add_argument("--json", action="store_true")
    anki.set_defaults(handler=cmd_anki)


def add_markdown(formats: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    markdown = formats.add_parser(
        "markdown",
        help="the cards and TIL notes as Markdown files with front matter (an Obsidian vault)",
        description="Write Cards/<title>.md per card and TIL/<date>.md per day into DIR. Exporting into the same "
        "folder again updates these files; files it did not write (or that you edited) are left as they are.",
    )
    markdown.add_argument("folder", type=Path, metavar="DIR")
    markdown.add_argument("--json", action="store_true")
    markdown.set_defaults(handler=cmd_markdown)


def cmd_anki(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.export_anki(args.file, cards=args.cards)
    if args.json:
        print_json(result)
    else:
        print(result.summary)
    return 0


def cmd_markdown(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.export_markdown(args.folder)
    if args.json:
        print_json(result)
    else:
        print(result.summary)
    return 0
