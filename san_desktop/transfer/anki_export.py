"""The recall quizzes (and, if asked, the knowledge cards) as an Anki package (``.apkg``, written by genanki).

Everything that names a thing in Anki is stable, so exporting again and importing the new package updates
the notes imported before instead of adding them twice: the note types have fixed ids, a deck's id is a
hash of its name, and a note's GUID comes from the quiz's or card's id. A note's modification time is when
its quiz or card last changed: Anki's importer takes a note again only when it is newer than its copy.

A card's note is what to study from: its title on the front; its summary and then its scrap's text (refined,
if refining changed it), escaped and cut to ``TEXT_MAX_CHARS``, on the back; where it came from (the scrap's
title, and its address as a link when it is a web page) in ``Source``."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import genanki
import sqlalchemy as sa

from san_desktop.core.enums import QuizType
from san_desktop.core.urls import is_web_url
from san_desktop.core.user_files import check_target, write_file
from san_desktop.db.database import Database
from san_desktop.db.models import KnowledgeCard, Scrap
from san_desktop.transfer.files import NothingToExportError, writing
from san_desktop.transfer.library import CHUNK, SCRAP_TEXT, ExportCard, ExportQuiz, counted, read_quizzes

DECK_PREFIX = "SAN"
UNCATEGORISED = "Uncategorised"
# fixed for good: Anki knows the note types by id (a new id would make a second note type on import)
QUIZ_MODEL_ID = 1_735_208_417
# The card's note type gained a Source field, so it has a new id (and name), fixed for good in its turn: Anki
# takes a note type whose fields changed under an id it knows as another note type (a copy with a random id,
# again on every import), and never updates a note into it. 1_735_208_418 was the two-field type (Front, Back)
# of exports before: notes imported with it stay as they were on a plain import (Anki reports them as
# conflicting); imported with Anki's "Merge note types" option, they move to this type and are updated.
CARD_MODEL_ID = 1_735_208_419
TEXT_MAX_CHARS = 20_000  # of a scrap's text on a card's back (a whole article is no flash card); the rest is cut
# genanki's advice for ids it did not make: within [2^30, 2^31), clear of Anki's own (1 is the Default deck)
_DECK_ID_LOW, _DECK_ID_HIGH = 1 << 30, 1 << 31

_CSS = ".card { font-family: sans-serif; font-size: 20px; text-align: left; } .source { font-size: 15px; color: #666; }"
# (the scrap's text keeps its runs of spaces: code and indented lines read as written)
_CARD_CSS = _CSS + " .text { font-size: 16px; white-space: pre-wrap; }"

QUIZ_MODEL = genanki.Model(
    QUIZ_MODEL_ID,
    "SAN recall quiz",
    fields=[{"name": "Question"}, {"name": "Answer"}, {"name": "Explanation"}, {"name": "Source"}],
    templates=[
        {
            "name": "Recall",
            "qfmt": "{{Question}}",
            "afmt": '{{FrontSide}}<hr id="answer">{{Answer}}'
            "{{#Explanation}}<p>{{Explanation}}</p>{{/Explanation}}"
            '<div class="source">{{Source}}</div>',
        }
    ],
    css=_CSS,
)

CARD_MODEL = genanki.Model(
    CARD_MODEL_ID,
    "SAN knowledge card (with source)",
    fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}],
    templates=[
        {
            "name": "Card",
            "qfmt": "{{Front}}",
            "afmt": '{{FrontSide}}<hr id="answer">{{Back}}<div class="source">{{Source}}</div>',
        }
    ],
    css=_CARD_CSS,
)


@dataclass(frozen=True)
class ScrapSource:
    """What a card's note shows of its scrap: its title (a page's) and its text (refined, if refining changed
    it), no longer than ``TEXT_MAX_CHARS`` and one character (which says it was cut)."""

    title: str | None
    text: str


@dataclass(frozen=True)
class AnkiExport:
    path: Path
    quizzes: int
    cards: int
    decks: tuple[str, ...]
    replaced: bool = False  # a file was there (``overwrite``) and the package took its place
    dry_run: bool = False  # nothing was written

    @property
    def notes(self) -> int:
        return self.quizzes + self.cards

    @property
    def summary(self) -> str:
        what = counted(self.quizzes, "quiz", "quizzes")
        if self.cards:
            what += f" and {counted(self.cards, 'card')}"
        where = f"{counted(len(self.decks), 'deck')} to {self.path}"
        if self.dry_run:
            return f"Would export {what} in {where}{' (replacing it)' if self.replaced else ''}; nothing was written"
        return f"Exported {what} in {where}"


class _Note(genanki.Note):  # type: ignore[misc]  # (genanki has no type hints)
    """A note whose modification time is its own change, not the package's."""

    def __init__(self, modified: datetime, **values: Any) -> None:
        super().__init__(**values)
        self.modified = modified.timestamp()

    def write_to_db(self, cursor: Any, timestamp: float, deck_id: int, id_gen: Any) -> None:
        super().write_to_db(cursor, self.modified, deck_id, id_gen)


def field_text(text: str) -> str:
    """Plain text as an Anki field (HTML): escaped, its line breaks kept."""
    return html.escape(text.strip()).replace("\r\n", "\n").replace("\n", "<br>")


def anki_tag(tag: str) -> str:
    """Anki separates tags by spaces: a tag's own spaces become underscores."""
    return re.sub(r"\s+", "_", tag.strip())


def deck_name(card: ExportCard) -> str:
    # "::" would make a sub-deck of part of the category's name
    category = " ".join((card.category or "").replace("::", ":").split())
    return f"{DECK_PREFIX}::{category or UNCATEGORISED}"


def deck_id(name: str) -> int:
    """The same id for the same deck name, every export."""
    digest = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")
    return _DECK_ID_LOW + digest % (_DECK_ID_HIGH - _DECK_ID_LOW)


def quiz_guid(quiz_id: str) -> str:
    return str(genanki.guid_for("san-quiz", quiz_id))


def card_guid(card_id: str) -> str:
    return str(genanki.guid_for("san-card", card_id))


def _source(card: ExportCard) -> str:
    return f"<b>{field_text(card.title)}</b><br>{field_text(card.summary)}"


def _quiz_fields(quiz: ExportQuiz) -> list[str]:
    if quiz.quiz_type is QuizType.OX:
        question = f"{field_text(quiz.question)}<br><br><i>True (O) or false (X)?</i>"
        truth = quiz.answer.strip().upper() == "O"
        answer = "<b>O</b> (true)" if truth else "<b>X</b> (false)"
    else:
        question = field_text(quiz.question)
        answer = f"<b>{field_text(quiz.answer)}</b>"
        if others := [item for item in quiz.accepted if item.strip()]:
            answer += "<br>Also accepted: " + ", ".join(field_text(item) for item in others)
    return [question, answer, field_text(quiz.explanation), _source(quiz.card)]


def _tags(card: ExportCard) -> list[str]:
    return sorted({tag for tag in map(anki_tag, card.tags) if tag}, key=str.casefold)


def _quiz_note(quiz: ExportQuiz) -> genanki.Note:
    return _Note(
        max(quiz.updated_at, quiz.card.updated_at),  # the source field and the tags are the card's
        model=QUIZ_MODEL,
        fields=_quiz_fields(quiz),
        tags=_tags(quiz.card),
        guid=quiz_guid(quiz.id),
    )


def web_address(card: ExportCard) -> str | None:
    """The address of the page a card's scrap came from (a link's, or a captured page's), if it is one."""
    address = (card.source_ref or "").strip()
    return address if is_web_url(address) else None


def source_field(card: ExportCard, scrap: ScrapSource) -> str:
    """The scrap's title (the card's, if it has none) and where it came from: a web address as a link, anything
    else (a note's path, a book) as plain text."""
    title = (scrap.title or "").strip() or card.title
    name = f"<b>{field_text(title)}</b>"
    if address := web_address(card):
        link = f'<a href="{html.escape(address, quote=True)}">{field_text(address)}</a>'
        return link if title.strip() == address else f"{name}<br>{link}"
    if card.source_ref and card.source_ref.strip() and card.source_ref.strip() != title.strip():
        return f"{name}<br>{field_text(card.source_ref)}"
    return name


def back_field(card: ExportCard, scrap: ScrapSource) -> str:
    """The summary, then the scrap's text (escaped: no markup of the page reaches Anki), cut to
    ``TEXT_MAX_CHARS``."""
    back = field_text(card.summary)
    text = scrap.text.strip()
    if len(text) > TEXT_MAX_CHARS:
        text = text[:TEXT_MAX_CHARS].rstrip() + "\n\n[…] (cut here: the whole text is in SAN Desktop)"
    if text and text != card.summary.strip():
        back += f'<hr><div class="text">{field_text(text)}</div>'
    return back


def _card_note(card: ExportCard, scrap: ScrapSource) -> genanki.Note:
    return _Note(
        card.updated_at,
        model=CARD_MODEL,
        fields=[field_text(card.title), back_field(card, scrap), source_field(card, scrap)],
        tags=_tags(card),
        guid=card_guid(card.id),
    )


def read_scrap_sources(db: Database, card_ids: Iterable[str]) -> dict[str, ScrapSource]:
    """Each card's ``ScrapSource`` by card id; the text is cut in the query (a scrap may be a whole book)."""
    query = sa.select(KnowledgeCard.id, Scrap.title, sa.func.substr(SCRAP_TEXT, 1, TEXT_MAX_CHARS + 1)).join(
        Scrap, Scrap.id == KnowledgeCard.scrap_id
    )
    wanted = list(card_ids)
    found: dict[str, ScrapSource] = {}
    with db.sessions() as session:
        for start in range(0, len(wanted), CHUNK):
            rows = session.execute(query.where(KnowledgeCard.id.in_(wanted[start : start + CHUNK])))
            found |= {card_id: ScrapSource(title, content or "") for card_id, title, content in rows}
    return found


def _decks(notes: Iterable[tuple[str, genanki.Note]]) -> list[genanki.Deck]:
    decks: dict[str, genanki.Deck] = {}
    for name, note in notes:
        if name not in decks:
            decks[name] = genanki.Deck(deck_id(name), name)
        decks[name].add_note(note)
    return [decks[name] for name in sorted(decks)]


def check_destination(path: Path, *, overwrite: bool = False) -> bool:
    """Refuse what Anki cannot import or what must not be replaced (``core.user_files.check_target``);
    whether a file is there to be replaced."""
    return check_target(
        path, suffix=".apkg", why="Anki imports packages named so", example="san.apkg", overwrite=overwrite
    )


def export_anki(
    db: Database, path: Path, *, cards: bool = False, overwrite: bool = False, dry_run: bool = False
) -> AnkiExport:
    """Write the live quizzes (and with ``cards`` the live cards) as one package: a deck per category. An
    existing file is replaced only with ``overwrite`` (and never a link, a folder or a device); ``dry_run``
    says what it would write, and writes nothing."""
    replaced = check_destination(path, overwrite=overwrite)
    quizzes, all_cards = read_quizzes(db)
    chosen = all_cards if cards else []
    if not quizzes and not chosen:
        raise NothingToExportError("quizzes or cards" if cards else "quizzes (make some, or export the cards)")
    notes = [(deck_name(quiz.card), _quiz_note(quiz)) for quiz in quizzes]
    scraps = read_scrap_sources(db, [card.id for card in chosen])
    # (a scrap removed for good between the two reads: its card shows its title and summary only)
    notes += [(deck_name(card), _card_note(card, scraps.get(card.id, ScrapSource(None, "")))) for card in chosen]
    decks = _decks(notes)
    result = AnkiExport(path, len(quizzes), len(chosen), tuple(deck.name for deck in decks), replaced, dry_run)
    if not dry_run:
        with writing(path, "the Anki package"):
            write_file(
                path, lambda temporary: genanki.Package(decks).write_to_file(str(temporary)), overwrite=overwrite
            )
    return result
