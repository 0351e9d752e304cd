"""``san stars ...``: recommendations from your GitHub stars, ranked against what you are learning now."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from san_desktop.cli.common import add_list_options, open_library, print_rows, rows_wanted, short_time
from san_desktop.core.enums import JOB_STATUS_NAMES

if TYPE_CHECKING:
    from san_desktop.services.stars import StarsStatus

REASON_WIDTH = 60  # characters of a reason in the table (--json has all of it)
NAME_WIDTH = 40
HOW_TO_RANK = "`san stars sync`, then `san jobs run --until-idle` (or keep the app open)"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stars = commands.add_parser(
        "stars", help="recommendations from your GitHub stars, ranked against your recent cards"
    )
    sub = stars.add_subparsers(dest="stars_command", metavar="ACTION", required=True)
    sync = sub.add_parser(
        "sync",
        help="fetch your starred repositories, then rank them; the open app or `san jobs run` runs it",
        description="Ask for a sync of the starred repositories of the GitHub account of your token (the "
        "github.api_url setting), followed by a ranking against your recent cards. Both are background jobs: "
        "the open app or `san jobs run --until-idle` runs them.",
    )
    sync.add_argument(
        "--full", action="store_true", help="walk every page (repositories you no longer star are dropped)"
    )
    sync.set_defaults(handler=cmd_sync)
    recommend = sub.add_parser("recommend", help="the latest ranking's recommendations, best first")
    recommend.add_argument("--language", metavar="L", help="only repositories in this language (e.g. Python)")
    add_list_options(recommend, 20)
    recommend.set_defaults(handler=cmd_recommend)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cmd_sync(args: argparse.Namespace) -> int:
    from san_desktop.queue.payloads import StarSyncPayload, load_payload

    with open_library(args) as app:
        job = app.refresh_stars(full=args.full).value
        api_url = app.settings.github.api_url
    # a sync already waiting or running is the one asked for (one per account): it may not be a full one
    full = load_payload(StarSyncPayload, job.payload).full
    state = JOB_STATUS_NAMES[job.status].lower()
    print(f"{'Full sync' if full else 'Sync'} of your stars on {api_url}: job {job.id} is {state}.")
    if args.full and not full:
        print("That sync was asked for before and is not a full one: ask again with --full once it has run.")
    print("The open app or `san jobs run --until-idle` runs it, then ranks them; `san stars recommend` lists them.")
    return 0


def _language(wanted: str | None, status: StarsStatus) -> str | None:
    """The stored spelling of a language asked for in any case (GitHub says "Python", people type python)."""
    if not wanted:
        return None
    for language in status.languages:
        if language.casefold() == wanted.strip().casefold():
            return language
    return wanted.strip()


def _nothing_yet(status: StarsStatus) -> str:
    if not status.repositories:
        return f"No recommendations yet: no starred repositories are synced. Run {HOW_TO_RANK}."
    return (
        f"No recommendations yet from your {status.repositories} starred repositories (they are ranked "
        f"against your cards: make some first). Run {HOW_TO_RANK}."
    )


def _nothing_in(language: str | None, status: StarsStatus) -> str:
    if language in status.languages:
        return f"No recommendations in {language} in the latest ranking."
    languages = ", ".join(status.languages) or "none"
    return f"None of your starred repositories is in {language} (their languages: {languages})."


def cmd_recommend(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        status = app.stars.status()
        language = _language(args.language, status)
        total = app.stars.count_latest(language=language)
        found = app.stars.latest(limit=max(1, rows_wanted(args) or total), language=language)
        anything = bool(found) or (language is not None and bool(app.stars.latest(limit=1)))
    print_rows(
        found,
        args,
        headers=["RANK", "REPOSITORY", "STARS", "LANGUAGE", "REASON", "URL"],
        cells=lambda item: [
            str(item.rank),
            _one_line(item.full_name, NAME_WIDTH),
            f"{item.stars:,}",
            item.language or "-",
            _one_line(item.reason, REASON_WIDTH),
            item.html_url,
        ],
        empty=_nothing_in(language, status) if anything else _nothing_yet(status),
        noun="recommendation",
        total=total,
        heading=f"From your {status.repositories} starred repositories (synced {short_time(status.last_sync)}, "
        f"ranked {short_time(status.last_ranking)}):\n",
    )
    return 0
