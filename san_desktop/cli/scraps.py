"""``san scrap ...``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from san_desktop.cli.common import add_list_options, open_library, print_json, print_rows, rows_wanted, short_time
from san_desktop.core.enums import JobStatus
from san_desktop.core.errors import SanError
from san_desktop.core.inputs import read_stdin
from san_desktop.core.redact import first_cause
from san_desktop.core.text import decode_bytes, preview
from san_desktop.core.urls import is_web_url

if TYPE_CHECKING:
    from san_desktop.app import SanApp
    from san_desktop.cli.clipboard import Clipboard
    from san_desktop.services.scrap_info import ScrapInfo
    from san_desktop.services.scraps import CaptureResult


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    scrap = commands.add_parser("scrap", help="capture and manage scraps")
    sub = scrap.add_subparsers(dest="scrap_command", metavar="ACTION", required=True)
    add = sub.add_parser(
        "add", help="scrap text, a file or a web page (the running app or `san jobs run` makes its card)"
    )
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to scrap (it may start with a dash)")
    source.add_argument("--file", type=Path, help="a .txt, .md or .html file")
    source.add_argument("--url", help="a web page: stored at once, its article fetched by a job, then its card")
    source.add_argument("-", dest="stdin", action="store_true", help="read the text from standard input")
    source.add_argument(
        "--clipboard",
        action="store_true",
        help="what is on the system clipboard (text, HTML, a link or a copied file): bind a global key to this",
    )
    add.add_argument("--json", action="store_true")
    add.set_defaults(handler=cmd_add)
    listing = sub.add_parser("list", help="scraps, newest first (the first 50; says how many more there are)")
    add_list_options(listing)
    listing.set_defaults(handler=cmd_list)
    delete = sub.add_parser(
        "delete", help="move scraps to the Trash with their cards and quizzes (several: one entry, restored as one)"
    )
    delete.add_argument("scrap_ids", metavar="ID", nargs="+")
    delete.set_defaults(handler=cmd_delete)
    restore = sub.add_parser("restore", help="bring a scrap back from the Trash")
    restore.add_argument("scrap_id", metavar="ID")
    restore.set_defaults(handler=cmd_restore)
    analyse = sub.add_parser(
        "analyse", help="make a link's card now from its address and title (when its page cannot be fetched)"
    )
    analyse.add_argument("scrap_id", metavar="ID")
    analyse.set_defaults(handler=cmd_analyse)


def cmd_add(args: argparse.Namespace) -> int:
    if args.clipboard:
        from san_desktop.cli.clipboard import read_clipboard

        clipboard = read_clipboard()  # (before the library opens: nothing to open for an empty clipboard)
        if clipboard.empty:
            raise SanError("The clipboard is empty or holds no text (an image?): nothing was scrapped.")
    with open_library(args) as app:
        if args.clipboard:
            result = _capture_clipboard(app, clipboard)
        elif args.file is not None:
            result = app.capture_file(args.file).value
        elif args.url is not None:
            if not is_web_url(args.url):
                raise SanError(
                    f"Not a web address: {args.url!r} (an http or https URL); use --text to scrap it as text."
                )
            result = app.capture_url(args.url).value
        elif args.stdin:
            data = read_stdin(app.settings.capture.max_bytes)
            result = app.capture_text(decode_bytes(data, "standard input")).value
        else:
            result = app.capture_text(args.text).value
    if args.json:
        print_json(result)
    elif result.created and result.fetch_job_id:
        print(f"scrap {result.scrap_id}")
        print(f"jobs {result.fetch_job_id} (the page is fetched, then its card is made)")
    elif result.created:
        print(f"scrap {result.scrap_id}")
        print(f"jobs {result.analysis_job_id} {result.refine_job_id}")
    else:
        print(f"duplicate of {result.scrap_id}")
    return 0


def _capture_clipboard(app: SanApp, clipboard: Clipboard) -> CaptureResult:
    """As the window's Scrap clipboard takes it: a copied file, a link, HTML (as its text), or text."""
    if clipboard.files:
        return app.capture_file(Path(clipboard.files[0])).value
    address = clipboard.links[0] if clipboard.links else clipboard.text.strip()
    if is_web_url(address) and "\n" not in address:
        return app.capture_url(address).value
    if clipboard.html:
        return app.capture_html(clipboard.html).value
    return app.capture_text(clipboard.text).value


def cmd_list(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        total = app.scraps.count_scraps()
        scraps = app.scraps.list_scraps(limit=max(1, rows_wanted(args) or total))
    print_rows(
        scraps,
        args,
        headers=["ID", "CAPTURED", "SOURCE", "CARD", "TEXT"],
        cells=lambda s: [
            s.id,
            short_time(s.created_at),
            s.source_type.value,
            _card_column(s),
            preview(s.title or s.content, 50),
        ],
        empty="No scraps yet.",
        noun="scrap",
        total=total,
    )
    return 0


def _card_column(scrap: ScrapInfo) -> str:
    if scrap.card_title:
        return preview(scrap.card_title, 40)
    if scrap.awaiting_page and scrap.fetch_status is JobStatus.FAILED:
        return preview(f"Page not fetched: {first_cause(scrap.fetch_error)}", 80)
    if scrap.awaiting_page:
        return "fetching the page"
    return "-"


def cmd_analyse(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        app.analyse_link_now(args.scrap_id)
    print(
        f"The card of scrap {args.scrap_id} is queued: the open app makes it, or `san jobs run --until-idle` "
        "when the app is not running."
    )
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        trashed = app.delete_scraps(args.scrap_ids).value
    if len(trashed.scrap_ids) == 1:
        print(f"Scrap {trashed.scrap_ids[0]} moved to the Trash; undo with: san scrap restore {trashed.scrap_ids[0]}")
    else:
        print(f"{len(trashed.scrap_ids)} scraps moved to the Trash; undo with: san trash restore {trashed.entry_id}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        app.restore_scrap(args.scrap_id)
    print(f"Scrap {args.scrap_id} restored.")
    return 0
