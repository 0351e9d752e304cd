"""``san til ...``: the daily "Today I Learned" note."""

from __future__ import annotations

import argparse
from pathlib import Path

from san_desktop.cli.common import MAX_ROWS, add_list_options, open_library, print_json, print_rows, rows_wanted
from san_desktop.cli.export import add_dry_run, add_overwrite, target_path
from san_desktop.core.enums import JOB_STATUS_NAMES, CommitTarget


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    til = commands.add_parser("til", help='the daily "Today I Learned" note')
    sub = til.add_subparsers(dest="til_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="days with cards, newest first, and their TIL (the first 90)")
    add_list_options(listing, 90)
    listing.set_defaults(handler=cmd_list)
    generate = sub.add_parser("generate", help="generate a day's TIL (today by default); `san jobs run` makes it")
    generate.add_argument("date", nargs="?", metavar="DATE", help="YYYY-MM-DD in your time zone")
    generate.set_defaults(handler=cmd_generate)
    retry = sub.add_parser("retry", help="resume a failed TIL at the step that failed")
    retry.add_argument("date", metavar="DATE")
    retry.set_defaults(handler=cmd_generate)
    show = sub.add_parser("show", help="a day's TIL")
    show.add_argument("date", metavar="DATE")
    form = show.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--markdown", action="store_true", help="only the markdown text")
    form.add_argument("--html", action="store_true", help="the text as the app renders it (sanitised HTML)")
    show.set_defaults(handler=cmd_show)
    commit = sub.add_parser("commit", help="commit a day's current TIL to GitHub or a local repository")
    commit.add_argument("date", metavar="DATE")
    commit.add_argument("--target", choices=["github", "local"], help="default: the github.target setting")
    commit.add_argument("--path", help="the file path in the repository (default: from github.path_template)")
    commit.add_argument("--dry-run", action="store_true", help="only say what would be committed where")
    commit.set_defaults(handler=cmd_commit)
    commits = sub.add_parser("commits", help="the commits of a day's TIL")
    commits.add_argument("date", metavar="DATE")
    add_list_options(commits)
    commits.set_defaults(handler=cmd_commits)
    export = sub.add_parser(
        "export",
        help="write a day's TIL markdown to a file",
        description="Write the day's current TIL to FILE.md: a new file, or with --overwrite the file replaced once "
        "the new one is whole (never a link, a folder or a device).",
    )
    export.add_argument("date", metavar="DATE")
    export.add_argument("--out", type=Path, required=True, metavar="FILE.md")
    add_overwrite(export)
    add_dry_run(export)
    export.set_defaults(handler=cmd_export)


def cmd_list(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        # (no count: the days are found one by one; one more than --limit says whether there are more)
        days = app.til.days(limit=rows_wanted(args) or MAX_ROWS)
    print_rows(
        days,
        args,
        headers=["DATE", "CARDS", "TIL", "TITLE"],
        cells=lambda d: [d.local_date, str(d.cards), d.status.value if d.status else "-", d.title or ""],
        empty="No cards yet: scrap something first.",
        noun="day",
    )
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        day = args.date or app.til.today()
        job = app.generate_til(day).value
    print(
        f"TIL of {day}: job {job.id} is {JOB_STATUS_NAMES[job.status].lower()} (the open app or `san jobs run` runs it)"
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from san_desktop.core.markdown_html import to_safe_html

    with open_library(args) as app:
        view = app.til.get(args.date)
    if args.json:
        print_json(view)
        return 0
    if args.markdown or args.html:
        if view.markdown is None:
            print(f"No text yet: the TIL of {view.local_date} is {view.status.value.lower()}.")
            return 1
        print(to_safe_html(view.markdown) if args.html else view.markdown, end="")
        return 0
    print(f"TIL {view.local_date}: {view.title or '(no title yet)'}")
    print(f"Status: {view.status.value.lower()}, version {view.current_version or '-'}")
    if view.last_failed_step:
        print(f"Failed at the {view.last_failed_step} step: {view.last_error_message}")
        print(f"Resume it with: san til retry {view.local_date}")
    if view.inputs_changed:
        print(f"The day's cards changed since this version was made; regenerate: san til generate {view.local_date}")
    if view.recall:
        print("Recall: " + "; ".join(item.title for item in view.recall))
    if view.markdown:
        print()
        print(view.markdown, end="")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = target_path(args.out)
    with open_library(args) as app:
        replaces = app.til.export(args.date, out, overwrite=args.overwrite, dry_run=args.dry_run)
    if args.dry_run:
        print(f"Would write {out}{', replacing it' if replaces else ''}; nothing was written")
    else:
        print(f"Written to {out}")
    return 0


def cmd_commit(args: argparse.Namespace) -> int:
    target = CommitTarget(args.target.upper()) if args.target else None
    with open_library(args) as app:
        if args.dry_run:  # the repository looked at as the commit job will look at it
            preview = app.commits.preview(args.date, target=target, path=args.path)
            plan = preview.plan
            print(f"Would commit version {plan.version} of {plan.local_date} to {plan.where}")
            print(f"  path:    {plan.path}")
            if preview.placement is not None and preview.placement.moved:
                print(f"           ({preview.asked} exists, and SAN Desktop never replaces a file it did not write)")
            elif preview.unchecked:
                print(f"           ({preview.unchecked})")
            print(f"  message: {plan.message}")
            return 0
        info = app.commit_til(args.date, target=target, path=args.path).value
    print(f"Commit of {args.date} to {info.where} at {info.path} requested: {info.id}")
    print("The open app or `san jobs run` makes it; `san til commits DATE` shows the result.")
    return 0


def cmd_commits(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        found = app.commits.list(args.date)
    print_rows(
        found,
        args,
        headers=["WHEN", "VERSION", "STATUS", "WHERE", "PATH", "COMMIT"],
        cells=lambda c: [
            c.created_at.astimezone().strftime("%Y-%m-%d %H:%M"),
            str(c.version),
            c.status.value,
            f"{c.repository} ({c.branch})",
            c.path,
            c.html_url or c.commit_sha or (c.error_message or "")[:60],
        ],
        empty=f"No commits of the TIL of {args.date} yet.",
        noun="commit",
        total=len(found),
    )
    return 0
