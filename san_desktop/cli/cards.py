"""``san cards ...``: list, show, similar, and correcting a card (edit, analyse again, rename a tag); and
``san search``: cards found by their words, their scrap's text, or meaning."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from san_desktop.cli.common import MAX_ROWS, add_list_options, open_library, print_json, print_rows, rows_wanted

if TYPE_CHECKING:
    from san_desktop.services.cards import FoundCard, SimilarCard

RUN_JOBS = "the open app does it, or `san jobs run --until-idle` when the app is not running"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    card = commands.add_parser("cards", help="knowledge cards")
    card_sub = card.add_subparsers(dest="cards_command", metavar="ACTION", required=True)
    card_list = card_sub.add_parser(
        "list", help="cards, newest first, or those --search finds, best first (the first 50; says if there are more)"
    )
    card_list.add_argument("--search", default="")
    add_list_options(card_list)
    card_list.set_defaults(handler=cmd_list)
    show = card_sub.add_parser("show", help="one card in full (and which of its fields you edited)")
    show.add_argument("card_id", metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)
    similar = card_sub.add_parser("similar", help="cards similar to one card")
    similar.add_argument("card_id", metavar="ID")
    add_list_options(similar, 10)
    similar.set_defaults(handler=cmd_similar)
    edit = card_sub.add_parser(
        "edit",
        help="correct a card: the fields you change stay yours when the card is analysed again",
        description="Correct a card. The fields you change are marked as yours: analysing the card again keeps "
        "them (unless `san cards analyse ID --replace-edits`). A new title or summary gets a new vector in the "
        "background, so its similar cards follow.",
    )
    edit.add_argument("card_id", metavar="ID")
    edit.add_argument("--title", help="the new title")
    edit.add_argument("--summary", help="the new summary")
    edit.add_argument("--tags", metavar="A,B", help="the card's tags, separated by commas (at most 5; '' for none)")
    edit.add_argument("--category", help="one of the categories (a wrong one lists them)")
    edit.add_argument("--json", action="store_true")
    edit.set_defaults(handler=cmd_edit)
    analyse = card_sub.add_parser(
        "analyse", help="analyse a card again with the configured AI provider, keeping the fields you edited"
    )
    analyse.add_argument("card_id", metavar="ID")
    analyse.add_argument("--replace-edits", action="store_true", help="let the analysis replace your edits too")
    analyse.set_defaults(handler=cmd_analyse)
    rename = card_sub.add_parser(
        "rename-tag", help="rename a tag on every card that has it (merged into NEW if that tag exists)"
    )
    rename.add_argument("old", metavar="OLD")
    rename.add_argument("new", metavar="NEW")
    rename.set_defaults(handler=cmd_rename_tag)


def add_search_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    search = commands.add_parser(
        "search",
        help="find cards and TIL notes by their words, their scrap's text, or meaning (in English or Korean)",
        description="Find cards by the words of their title, summary, tags or category, by the words of the "
        "scrap they came from, and by meaning (the embedded model: a Korean query finds English cards on its "
        "topic and the other way round); then the days whose TIL note it finds by its words or meaning. Each "
        "result says where it matched. --limit N: the first N cards and the first N TIL notes.",
    )
    search.add_argument("query", metavar="QUERY", nargs="+")
    add_list_options(search, 20)
    search.set_defaults(handler=cmd_search)


def cmd_list(args: argparse.Namespace) -> int:
    searching = bool(args.search.strip())
    with open_library(args) as app:
        total = app.cards.count_cards()
        found = app.cards.list_cards(args.search, limit=max(1, rows_wanted(args) or total))
    print_rows(
        found,
        args,
        headers=["ID", "CATEGORY", "TITLE", "TAGS"],
        cells=lambda c: [c.id, c.category or "-", c.title, ", ".join(c.tags)],
        empty="No card matches." if searching else "No cards.",
        noun="card",
        total=None if searching else total,  # a search cannot count its matches without finding them all
        unknown_more="More cards match",
    )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from san_desktop.services.cards import FoundTil
    from san_desktop.services.search import WHERE_SAID

    query = " ".join(args.query)
    with open_library(args) as app:
        cards = app.cards.search(query, limit=max(1, rows_wanted(args) or app.cards.count_cards()))
        tils = app.cards.search_tils(query, limit=rows_wanted(args) or MAX_ROWS)
    # --limit counts the cards and the TIL notes apart: the notes come after the cards, and would never be shown
    # past a page of cards (the days' notes after the cards: `san til show DATE` opens one)
    shown: list[FoundCard | FoundTil] = [*cards[: args.limit], *tils[: args.limit]]

    def cells(item: FoundCard | FoundTil) -> list[str]:
        where = ", ".join(WHERE_SAID[where] for where in item.matched)
        if isinstance(item, FoundTil):
            return [f"TIL {item.til.local_date}", where, item.til.title]
        return [item.card.id, where, item.card.title]

    def as_json(item: FoundCard | FoundTil) -> dict[str, Any]:
        if isinstance(item, FoundTil):
            return {"til": item.til, "matched": list(item.matched)}
        return {"card": item.card, "matched": list(item.matched)}

    print_rows(
        shown,
        args,
        headers=["ID", "FOUND BY", "TITLE"],
        cells=cells,
        empty=f"Nothing found for “{query}”.",
        noun="result",
        more=len(shown) < len(cards) + len(tils),
        unknown_more="More cards or TIL notes match",
        as_json=as_json,
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from san_desktop.services.card_fields import fields_phrase

    with open_library(args) as app:
        detail = app.cards.get(args.card_id)
    if args.json:
        print_json(detail)
        return 0
    card = detail.card
    print(card.title)
    print(f"{card.category or 'Uncategorised'} · {', '.join(card.tags)}")
    if card.edited:
        print(f"Edited by you: {fields_phrase(card.edited)}.")
    print()
    print(card.summary)
    print()
    print(detail.refined_content or detail.content)
    return 0


def cmd_similar(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        found = app.cards.similar(args.card_id, limit=max(1, rows_wanted(args) or app.cards.count_cards()))

    def as_json(s: SimilarCard) -> dict[str, Any]:
        return {
            "card": s.card,
            "distance": s.distance,
            "score": s.score,
            "within_threshold": s.within_threshold,
            "model": s.model_id,
        }

    print_rows(
        found,
        args,
        headers=["ID", "SIMILAR", "TITLE"],
        cells=lambda s: [s.card.id, f"{s.score:.0%}", s.card.title],
        empty="No similar cards yet.",
        noun="card",
        unknown_more="More similar cards",
        as_json=as_json,
        heading=None if not found or found[0].within_threshold else "Nothing close — the nearest cards:",
    )
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    from san_desktop.services.card_edits import CardEdit
    from san_desktop.services.card_fields import fields_phrase, split_tags

    edit = CardEdit(
        title=args.title,
        summary=args.summary,
        tags=split_tags(args.tags) if args.tags is not None else None,
        category=args.category,
    )
    with open_library(args) as app:
        result = app.edit_card(args.card_id, edit).value
    if args.json:
        print_json({"card": result.card, "changed": result.changed, "jobs": [job.id for job in result.jobs]})
        return 0
    if not result.changed:
        print("Nothing changed: the card already says that.")
    else:
        print(f"Card {args.card_id} edited: {fields_phrase(result.changed)}.")
    if {"title", "summary"} & set(result.changed):
        print(f"Its new vector (for similar cards) is made in the background: {RUN_JOBS}.")
    spelled = {tag.casefold(): tag for tag in (result.card.tags if result.card is not None else ())}
    for typed in edit.tags or ():
        if spelled.get(typed.casefold(), typed) != typed:
            print(
                f"The tag “{typed}” is spelled “{spelled[typed.casefold()]}” (a tag has one spelling; "
                "`san cards rename-tag` changes it on every card)."
            )
    return 0


def cmd_analyse(args: argparse.Namespace) -> int:
    from san_desktop.services.card_fields import fields_phrase

    with open_library(args) as app:
        edited = app.cards.get(args.card_id).card.edited
        job = app.analyse_card_again(args.card_id, replace_edits=args.replace_edits).value
    print(f"Card {args.card_id} is analysed again (job {job.id}): {RUN_JOBS}.")
    if edited and args.replace_edits:
        print(f"The analysis replaces your edits of its {fields_phrase(edited)}.")
    elif edited:
        print(f"Your edits of its {fields_phrase(edited)} are kept (--replace-edits replaces them).")
    return 0


def cmd_rename_tag(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        result = app.rename_tag(args.old, args.new).value
    cards = len(result.before)
    if not cards:
        print(f"Nothing changed: the tag is already called “{args.new.strip()}”.")
        return 0
    print(f"Renamed the tag “{args.old.strip()}” to “{args.new.strip()}” on {cards} card{'s' if cards != 1 else ''}.")
    return 0
