"""The Anki export, read back by the official Anki: decks per category, the quizzes' and cards' fields
(Korean intact), tags, and a second export that updates instead of duplicating."""

from __future__ import annotations

import html
from datetime import datetime, timedelta
from pathlib import Path

import genanki
import pytest
import sqlalchemy as sa
from anki.collection import ImportAnkiPackageOptions, ImportAnkiPackageRequest

from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, QuizType
from san_desktop.core.errors import SanError
from san_desktop.db.models import KnowledgeCard, RecallQuiz
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.cards import CardSummary
from san_desktop.transfer.anki_export import (
    CARD_MODEL,
    CARD_MODEL_ID,
    TEXT_MAX_CHARS,
    card_guid,
    field_text,
    quiz_guid,
)
from san_desktop.transfer.files import NothingToExportError
from tests.support.anki_reader import AnkiCollection, empty_collection
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import cards_of, executor, quizzes_of_today

TEXTS = (QUIZ_TEXTS[0], QUIZ_TEXTS[2], QUIZ_TEXTS[5], QUIZ_TEXTS[6])  # two English, two Korean
PAGE_ADDRESS = "https://blog.example.org/raft?lang=ko&part=2"
PAGE = """<html><head><title>Raft, part 2</title></head><body><article><h1>Raft, part 2</h1>
<p>Raft elects a leader that accepts every write and replicates its log to the followers &amp; the
<b>leader</b> commits an entry once a majority stored it.</p>
<p>A follower that hears nothing for an election timeout becomes a candidate: 후보가 된다.</p>
</article></body></html>"""


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
        text = app.cards.get(card.id).content
        assert note.note_type == "SAN knowledge card (with source)"
        assert note.fields["Front"] == html.escape(card.title)
        assert note.fields["Back"].startswith(html.escape(card.summary))
        assert field_text(text) in note.fields["Back"]  # the scrap's whole text after the summary
        assert note.fields["Source"] == f"<b>{html.escape(card.title)}</b>"  # a typed text: no title, no address
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


def _page_card(app: SanApp) -> CardSummary:
    """The card of a captured page (its address kept as the scrap's source)."""
    scrap_id = app.capture_html(PAGE, PAGE_ADDRESS).value.scrap_id
    executor(app).drain(JobPool.AI)
    (card,) = [card for card in _cards(app).values() if card.scrap_id == scrap_id]
    return card


def test_a_pages_card_has_its_text_on_the_back_and_a_link_to_the_page_as_its_source(
    app: SanApp, tmp_path: Path
) -> None:
    card = _page_card(app)
    text = app.cards.get(card.id).content
    assert "후보가 된다" in text
    result = app.export_anki(tmp_path / "san.apkg", cards=True)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(result.path)
        note = anki.notes()[card_guid(card.id)]
    href = html.escape(PAGE_ADDRESS)
    assert f'<a href="{href}">{href}</a>' in note.fields["Source"]
    assert note.fields["Front"] == html.escape(card.title)
    summary, _rule, rest = note.fields["Back"].partition("<hr>")
    assert summary == field_text(card.summary)
    assert rest == f'<div class="text">{field_text(text)}</div>'
    assert "&lt;b&gt;" not in rest  # the page's markup was read as text, and the text escaped


def test_a_new_title_updates_the_cards_note_on_the_next_import_and_adds_none(app: SanApp, tmp_path: Path) -> None:
    card = _page_card(app)
    cards_of(app, TEXTS[:1])
    _an_hour_ago(app)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(app.export_anki(tmp_path / "first.apkg", cards=True).path)
        before = anki.notes()
        app.edit_card(card.id, CardEdit(title="Raft <leaders> & 후보"))
        imported = anki.import_package(app.export_anki(tmp_path / "second.apkg", cards=True).path)
        after = anki.notes()
    assert (imported.new, imported.updated) == (0, 1)
    assert set(after) == set(before)
    mine = card_guid(card.id)
    assert after[mine].note_id == before[mine].note_id
    assert after[mine].fields["Front"] == "Raft &lt;leaders&gt; &amp; 후보"
    assert after[mine].fields["Back"] == before[mine].fields["Back"]
    assert {guid: note for guid, note in after.items() if guid != mine} == {
        guid: note for guid, note in before.items() if guid != mine
    }


def test_the_refined_text_is_on_the_back_when_refining_changed_it(app: SanApp, tmp_path: Path) -> None:
    # the embedded provider's refinement drops a line pasted twice and runs of spaces
    line = "Vacuum rewrites the whole SQLite database file to give its free pages back to the disk."
    scrap_id = app.capture_text(f"{line}\n{line}\nIt   needs as much free space as the file.").value.scrap_id
    executor(app).drain(JobPool.AI)
    (card,) = [card for card in _cards(app).values() if card.scrap_id == scrap_id]
    detail = app.cards.get(card.id)
    assert detail.refined_content
    assert detail.refined_content != detail.content
    result = app.export_anki(tmp_path / "san.apkg", cards=True)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(result.path)
        back = anki.notes()[card_guid(card.id)].fields["Back"]
    _summary, _rule, text = back.partition("<hr>")
    assert text == f'<div class="text">{field_text(detail.refined_content)}</div>'
    assert text.count(html.escape(line)) == 1


def test_a_whole_book_is_cut_on_the_card(app: SanApp, tmp_path: Path) -> None:
    line = "Write {} to a WAL database appends a frame to the log file; a checkpoint copies it back.\n"
    scrap_id = app.capture_text("".join(line.format(number) for number in range(700))).value.scrap_id  # 60,000
    executor(app).drain(JobPool.AI)
    (card,) = [card for card in _cards(app).values() if card.scrap_id == scrap_id]
    result = app.export_anki(tmp_path / "san.apkg", cards=True)
    with empty_collection(tmp_path / "anki") as anki:
        anki.import_package(result.path)
        back = anki.notes()[card_guid(card.id)].fields["Back"]
    assert back.endswith("[…] (cut here: the whole text is in SAN Desktop)</div>")
    assert "Write 199 to" in back
    assert "Write 699 to" not in back
    assert TEXT_MAX_CHARS < len(back) < 2 * TEXT_MAX_CHARS


# the card's note type of exports before the Source field, as they wrote it
OLD_CARD_MODEL = genanki.Model(
    1_735_208_418,
    "SAN knowledge card",
    fields=[{"name": "Front"}, {"name": "Back"}],
    templates=[{"name": "Card", "qfmt": "{{Front}}", "afmt": '{{FrontSide}}<hr id="answer">{{Back}}'}],
)


def _old_package(cards: list[CardSummary], path: Path) -> Path:
    deck = genanki.Deck(1 << 30, "SAN::Old")
    for card in cards:
        note = genanki.Note(model=OLD_CARD_MODEL, fields=[card.title, card.summary], guid=card_guid(card.id))
        deck.add_note(note)
    genanki.Package([deck]).write_to_file(str(path))
    return path


def _import_merging(anki: AnkiCollection, package: Path) -> tuple[int, int, int]:
    options = ImportAnkiPackageOptions(merge_notetypes=True)
    log = anki.collection.import_anki_package(ImportAnkiPackageRequest(package_path=str(package), options=options)).log
    return len(log.new), len(log.updated), len(log.conflicting)


def test_a_deck_of_the_two_field_cards_is_left_as_it_was_or_moved_to_the_new_type_when_anki_merges(
    app: SanApp, tmp_path: Path
) -> None:
    assert OLD_CARD_MODEL.model_id != CARD_MODEL_ID
    assert [field["name"] for field in CARD_MODEL.fields] == ["Front", "Back", "Source"]
    cards = list(_library(app).values())
    old = _old_package(cards, tmp_path / "old.apkg")
    with app.db.write() as session:  # genanki stamped the old notes with the time it wrote them: newer than that
        for row in session.scalars(sa.select(KnowledgeCard)):
            row.updated_at = datetime.now(row.updated_at.tzinfo) + timedelta(hours=1)
    new = app.export_anki(tmp_path / "new.apkg", cards=True).path

    with empty_collection(tmp_path / "plain") as anki:
        anki.import_package(old)
        imported = anki.import_package(new)
        notes = anki.notes()
    assert (imported.new, imported.updated) == (len(app.quizzes.all()), 0)  # the cards' notes: kept as they were
    assert {notes[card_guid(card.id)].note_type for card in cards} == {"SAN knowledge card"}

    with empty_collection(tmp_path / "merged") as anki:
        anki.import_package(old)
        assert _import_merging(anki, new) == (len(app.quizzes.all()), len(cards), 0)
        notes = anki.notes()
    assert len(notes) == len(app.quizzes.all()) + len(cards)
    for card in cards:
        note = notes[card_guid(card.id)]
        assert note.note_type == "SAN knowledge card (with source)"
        assert note.fields["Source"] == f"<b>{html.escape(card.title)}</b>"
