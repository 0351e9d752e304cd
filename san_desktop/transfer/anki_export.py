"""The recall quizzes (and, if asked, the knowledge cards) as an Anki package (``.apkg``, written by genanki).

Everything that names a thing in Anki is stable, so exporting again and importing the new package updates
the notes imported before instead of adding them twice: the note types have fixed ids, a deck's id is a
hash of its name, and a note's GUID comes from the quiz's or card's id. A note's modification time is when
its quiz or card last changed: Anki's importer takes a note again only when it is newer than its copy."""

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

from san_desktop.core.enums import QuizType
from san_desktop.core.user_files import check_target, write_file
from san_desktop.db.database import Database
from san_desktop.transfer.files import NothingToExportError, writing
from san_desktop.transfer.library import ExportCard, ExportQuiz, counted, read_quizzes

DECK_PREFIX = "SAN"
UNCATEGORISED = "Uncategorised"
# fixed for good: Anki knows the note types by id (a new id would make a second note type on import)
QUIZ_MODEL_ID = 1_735_208_417
CARD_MODEL_ID = 1_735_208_418
# genanki's advice for ids it did not make: within [2^30, 2^31), clear of Anki's own (1 is the Default deck)
_DECK_ID_LOW, _DECK_ID_HIGH = 1 << 30, 1 << 31

_CSS = ".card { font-family: sans-serif; font-size: 20px; text-align: left; } .source { font-size: 15px; color: #666; }"

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
    "SAN knowledge card",
    fields=[{"name": "Front"}, {"name": "Back"}],
    templates=[{"name": "Card", "qfmt": "{{Front}}", "afmt": '{{FrontSide}}<hr id="answer">{{Back}}'}],
    css=_CSS,
)


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


def _card_note(card: ExportCard) -> genanki.Note:
    return _Note(
        card.updated_at,
        model=CARD_MODEL,
        fields=[field_text(card.title), field_text(card.summary)],
        tags=_tags(card),
        guid=card_guid(card.id),
    )


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
    notes += [(deck_name(card), _card_note(card)) for card in chosen]
    decks = _decks(notes)
    result = AnkiExport(path, len(quizzes), len(chosen), tuple(deck.name for deck in decks), replaced, dry_run)
    if not dry_run:
        with writing(path, "the Anki package"):
            write_file(
                path, lambda temporary: genanki.Package(decks).write_to_file(str(temporary)), overwrite=overwrite
            )
    return result
