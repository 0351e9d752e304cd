"""The Anki export, read back by the official Anki: decks per category, the quizzes' and cards' fields
(Korean intact), tags, and a second export that updates instead of duplicating."""

from __future__ import annotations

import html
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, QuizType
from san_desktop.core.errors import SanError
from san_desktop.db.models import KnowledgeCard, RecallQuiz
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.cards import CardSummary
from san_desktop.transfer.anki_export import card_guid, quiz_guid
from san_desktop.transfer.files import NothingToExportError
from tests.support.anki_reader import empty_collection
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import executor, quizzes_of_today

TEXTS = (QUIZ_TEXTS[0], QUIZ_TEXTS[2], QUIZ_TEXTS[5], QUIZ_TEXTS[6])  # two English, two Korean


def _cards(app: SanApp) -> dict[str, CardSummary]:
    return {card.id: card for card in app.cards.list_cards(limit=1000)}


def _library(app: SanApp) -> dict[str, CardSummary]:
    """Cards and their quizzes; one card with tags that hold spaces and another category."""
    quizzes_of_today(app, TEXTS)
    first = next(iter(_cards(app).values()))
    app.edit_card(first.id, CardEdit(tags=("build cache", "한국어 태그", "sqlite"), category="Infra/DevOps"))
    return _cards(app)


def test_quizzes_arrive_in_anki_in_a_deck_per_category_with_their_text_source_and_tags(
    app: SanApp, tmp_path: Path
) -> None:
    cards = _library(app)
    quizzes = app.quizzes.all()
    assert len(quizzes) == 2 * len(TEXTS)

    result = app.export_anki(tmp_path / "san.apkg")

    assert (result.quizzes, result.cards, result.notes) == (len(quizzes), 0, len(quizzes))
    categories = {card.category for card in cards.values()}
    assert set(result.decks) == {f"SAN::{category}" for category in categories}
    with empty_collection(tmp_path / "anki") as anki:
        imported = anki.import_package(result.path)
        notes = anki.notes()
        decks = anki.deck_names()
    assert imported.new == len(quizzes)
    assert {f"SAN::{category}" for category in categories} <= decks
    assert len(notes) == len(quizzes)
    for quiz in quizzes:
        note = notes[quiz_guid(quiz.id)]
        card = cards[quiz.card_id]
        assert note.note_type == "SAN recall quiz"
        assert note.decks == (f"SAN::{card.category}",)
        assert html.escape(quiz.question) in note.fields["Question"]  # Korean as it was written
        source = note.fields["Source"]
        assert html.escape(card.title) in source
        assert html.escape(card.summary).replace("\n", "<br>") in source
        assert note.tags == tuple(sorted(tag.replace(" ", "_") for tag in card.tags))
        if quiz.quiz_type is QuizType.OX:
            assert "True (O) or false (X)?" in note.fields["Question"]
            assert note.fields["Answer"] == ("<b>O</b> (true)" if quiz.answer == "O" else "<b>X</b> (false)")
        else:
            assert note.fields["Answer"].startswith(f"<b>{html.escape(quiz.answer)}</b>")
    assert any("파드" in note.fields["Question"] + note.fields["Source"] for note in notes.values())
    assert any(note.tags == ("build_cache", "sqlite", "한국어_태그") for note in notes.values())


def test_a_second_export_adds_the_new_quiz_and_leaves_the_notes_imported_before_as_they_were(
    app: SanApp, tmp_path: Path
) -> None:
    _library(app)
    dropped = app.quizzes.all()[0]
    app.delete_quiz(dropped.id)  # made again below, as a new quiz
    first = app.export_anki(tmp_path / "first.apkg")
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(first.path)
        before = anki.notes()

        app.generate_quizzes(app.til.today())
        executor(app).drain(JobPool.AI)
        (new,) = [quiz for quiz in app.quizzes.all() if quiz_guid(quiz.id) not in before]
        second = app.export_anki(tmp_path / "second.apkg")
        imported = anki.import_package(second.path)
        after = anki.notes()

    assert (imported.new, imported.updated) == (1, 0)
    assert set(after) == set(before) | {quiz_guid(new.id)}
    assert {guid: after[guid] for guid in before} == before  # same ids, fields, tags, decks and times


def _an_hour_ago(app: SanApp) -> None:
    """The cards and quizzes as last changed an hour ago: Anki keeps a note's time in whole seconds, and an
    edit in the same second as the first export would not be newer."""
    with app.db.write() as session:
        for row in [*session.scalars(sa.select(KnowledgeCard)), *session.scalars(sa.select(RecallQuiz))]:
            row.updated_at -= timedelta(hours=1)


def test_an_edited_card_updates_its_quizzes_notes_on_the_next_import(app: SanApp, tmp_path: Path) -> None:
    cards = _library(app)
    _an_hour_ago(app)
    first = app.export_anki(tmp_path / "first.apkg")
    card = next(iter(cards.values()))
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(first.path)
        app.edit_card(card.id, CardEdit(title="고친 제목 <edited>"))
        imported = anki.import_package(app.export_anki(tmp_path / "second.apkg").path)
        notes = anki.notes()
    mine = [quiz for quiz in app.quizzes.all() if quiz.card_id == card.id]
    assert (imported.new, imported.updated) == (0, len(mine))
    for quiz in mine:
        assert "고친 제목 &lt;edited&gt;" in notes[quiz_guid(quiz.id)].fields["Source"]


def test_cards_come_as_basic_notes_when_asked(app: SanApp, tmp_path: Path) -> None:
    cards = _library(app)
    result = app.export_anki(tmp_path / "with-cards.apkg", cards=True)
    assert result.cards == len(cards)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(result.path)
        notes = anki.notes()
    assert len(notes) == result.quizzes + len(cards)
    for card in cards.values():
        note = notes[card_guid(card.id)]
        assert note.note_type == "SAN knowledge card"
        assert note.fields == {"Front": html.escape(card.title), "Back": html.escape(card.summary)}
        assert note.decks == (f"SAN::{card.category}",)


def test_a_deleted_scraps_card_and_quizzes_stay_out(app: SanApp, tmp_path: Path) -> None:
    cards = _library(app)
    gone = next(iter(cards.values()))
    app.delete_scrap(gone.scrap_id)
    result = app.export_anki(tmp_path / "san.apkg", cards=True)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(result.path)
        notes = anki.notes()
    assert card_guid(gone.id) not in notes
    kept = app.quizzes.all()
    assert {quiz.card_id for quiz in kept} == set(cards) - {gone.id}
    assert len(notes) == len(kept) + len(cards) - 1


def test_nothing_to_export_writes_no_file(app: SanApp, tmp_path: Path) -> None:
    target = tmp_path / "empty.apkg"
    with pytest.raises(NothingToExportError, match="no quizzes"):
        app.export_anki(target)
    assert not target.exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("san.txt", "does not end in .apkg"),
        ("missing/san.apkg", "there is no folder"),
        ("folder.apkg", "is a folder"),
    ],
)
def test_a_destination_anki_cannot_take_is_refused(app: SanApp, tmp_path: Path, name: str, message: str) -> None:
    quizzes_of_today(app, TEXTS[:1])
    (tmp_path / "folder.apkg").mkdir()
    with pytest.raises(SanError, match=message):
        app.export_anki(tmp_path / name)
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != "san-data") == ["folder.apkg"]
