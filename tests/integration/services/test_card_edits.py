"""Correcting a card by hand (issue 24): the four fields, marked as the person's; analysis again keeps them
unless asked; Undo; one spelling per tag; a new vector after a new title or summary; the day's TIL follows."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
import sqlalchemy as sa

from san_desktop.ai.base import CardDraft, embedding_text
from san_desktop.ai.local import LocalProvider
from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.db.models import CardEmbedding, KnowledgeCard, Tag
from san_desktop.db.vectors import from_stored
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.card_fields import CardEditError, split_tags
from san_desktop.services.cards import CardNotFoundError, CardSummary
from san_desktop.services.recovery.hooks import stale_embedding_hook
from san_desktop.services.recovery.sweep import sweep
from tests.support.jobs import jobs_of
from tests.support.til import cards_of, executor, run_one, til_text

DOCKER = "Docker multi-stage builds keep images small: build in one stage, copy the binary out."
WAL = "SQLite WAL mode lets readers continue while a writer commits. Checkpoints copy pages back."
WAL2 = "Write-ahead logging in SQLite: a checkpoint moves WAL pages into the database file."
REACT = "React useEffect runs after render; a wrong dependency array causes endless re-renders."
PIE = "Grandma's apple pie needs butter, flour, apples and cinnamon."

EDIT = CardEdit(
    title="Docker layer cache",
    summary="Layers that did not change are reused: copy what changes often last.",
    tags=("Docker", "build cache"),
    category="Architecture/Design",
)


def _card(app: SanApp, text: str) -> CardSummary:
    """The card made from ``text`` (by the embedded provider)."""
    found = [card for card in app.cards.list_cards(limit=1000) if app.cards.get(card.id).content == text]
    assert len(found) == 1
    return found[0]


def _with_cards(app: SanApp, texts: Sequence[str] = (DOCKER, WAL)) -> None:
    cards_of(app, texts)


def _analyse_again_by_the_app(app: SanApp, scrap_id: str) -> None:
    """An analysis no person asked for (a link's page arrived, a retry): the job with its default payload."""
    executor(app).drain(JobPool.AI)  # the edit's new vector first
    app.queue.enqueue(JobType.CARD_ANALYSIS, scrap_id)
    executor(app).drain(JobPool.AI)


class ReanalysingProvider(LocalProvider):
    """The embedded provider whose analysis says something else than the first one did (a new provider)."""

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        return CardDraft("Frontend caching", "About browsers.", ("value", "READ"), "Frontend")


# --- editing ---------------------------------------------------------------------------------------


def test_an_edit_of_all_four_fields_is_stored_marked_and_found(app: SanApp) -> None:
    _with_cards(app)
    card = _card(app, DOCKER)
    other = _card(app, WAL)

    result = app.edit_card(card.id, EDIT)

    shown = app.cards.get(card.id).card
    assert (shown.title, shown.summary, shown.tags, shown.category) == (
        "Docker layer cache",
        "Layers that did not change are reused: copy what changes often last.",
        ("build cache", "Docker"),
        "Architecture/Design",
    )
    assert shown.edited == ("title", "summary", "tags", "category")
    assert result.value.changed == ("title", "summary", "tags", "category")
    assert result.changes.scraps == {card.scrap_id}
    assert result.changes.cards_of_scraps == {card.scrap_id}
    assert app.cards.get(other.id).card == other  # nothing else changed
    assert [found.id for found in app.cards.list_cards("layer cache")] == [card.id]


def test_only_the_fields_that_changed_are_marked(app: SanApp) -> None:
    _with_cards(app)
    card = _card(app, DOCKER)
    result = app.edit_card(card.id, CardEdit(title=card.title, category="Databases")).value
    assert result.changed == ("category",)
    assert app.cards.get(card.id).card.edited == ("category",)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (CardEdit(title="   "), "A card needs a title"),
        (CardEdit(category="Frontnd"), "There is no category “Frontnd”. Choose one of: Frontend, Backend,"),
        (CardEdit(tags=("a", "b", "c", "d", "e", "f")), "A card has at most 5 tags; you gave 6: a, b, c, d, e, f."),
        (CardEdit(tags=("x" * 41,)), "A tag has at most 40 characters"),
        (CardEdit(title="t" * 201), "A title has at most 200 characters (this one has 201)."),
        (CardEdit(), "Nothing to change"),
    ],
)
def test_a_bad_edit_is_refused_with_a_sentence_and_changes_nothing(app: SanApp, edit: CardEdit, message: str) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    with pytest.raises(CardEditError, match=message.replace("(", r"\(").replace(")", r"\)")):
        app.edit_card(card.id, edit)
    assert app.cards.get(card.id).card == card


def test_an_unknown_card_is_refused(app: SanApp) -> None:
    with pytest.raises(CardNotFoundError, match="There is no card with id nope"):
        app.edit_card("nope", CardEdit(title="A title"))


def test_tags_as_typed_are_split_on_commas_without_hashes_blanks_or_repeats() -> None:
    assert split_tags(" #SQLite, sqlite , WAL,, ") == ("SQLite", "WAL")
    assert split_tags("") == ()


def test_a_category_and_a_tag_typed_in_another_case_keep_their_one_spelling(app: SanApp) -> None:
    _with_cards(app)
    docker, wal = _card(app, DOCKER), _card(app, WAL)
    assert "SQLite WAL" in wal.tags
    app.edit_card(docker.id, CardEdit(tags=("sqlite wal", "Docker"), category="databases"))
    edited = app.cards.get(docker.id).card
    assert edited.tags == ("Docker", "SQLite WAL")  # the tag both cards share, spelled as it was
    assert edited.category == "Databases"


# --- analysing again -------------------------------------------------------------------------------


def test_an_analysis_the_person_did_not_ask_for_keeps_the_edited_fields(
    app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, CardEdit(title="Docker layer cache", tags=("Docker",)))
    monkeypatch.setattr(app.providers, "_provider", ReanalysingProvider())  # a new provider says otherwise

    _analyse_again_by_the_app(app, card.scrap_id)

    after = app.cards.get(card.id).card
    assert (after.title, after.tags) == ("Docker layer cache", ("Docker",))  # the person's
    assert (after.summary, after.category) == ("About browsers.", "Frontend")  # the analysis's
    assert after.edited == ("title", "tags")


def test_analyse_again_keeping_the_edits_keeps_them(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, EDIT)
    executor(app).drain(JobPool.AI)  # its new vector
    monkeypatch.setattr(app.providers, "_provider", ReanalysingProvider())

    job = app.analyse_card_again(card.id, replace_edits=False).value
    executor(app).drain(JobPool.AI)

    assert app.queue.get(job.id).status is JobStatus.COMPLETED
    after = app.cards.get(card.id).card
    assert (after.title, after.summary, after.tags, after.category) == (
        EDIT.title,
        EDIT.summary,
        ("build cache", "Docker"),
        EDIT.category,
    )
    assert after.edited == ("title", "summary", "tags", "category")


def test_analyse_again_replacing_the_edits_replaces_them_and_forgets_the_marks(
    app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, EDIT)
    executor(app).drain(JobPool.AI)
    monkeypatch.setattr(app.providers, "_provider", ReanalysingProvider())

    app.analyse_card_again(card.id, replace_edits=True)
    executor(app).drain(JobPool.AI)

    after = app.cards.get(card.id).card
    assert (after.title, after.summary, after.tags, after.category) == (
        "Frontend caching",
        "About browsers.",
        ("READ", "value"),
        "Frontend",
    )
    assert after.edited == ()


def test_an_edit_made_after_asking_to_replace_the_edits_is_kept(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, CardEdit(title="First try"))
    executor(app).drain(JobPool.AI)
    app.analyse_card_again(card.id, replace_edits=True)  # waits for a worker
    app.edit_card(card.id, CardEdit(title="Docker layer cache"))  # its re-embedding joins the waiting analysis
    monkeypatch.setattr(app.providers, "_provider", ReanalysingProvider())

    executor(app).drain(JobPool.AI)

    after = app.cards.get(card.id).card
    assert after.title == "Docker layer cache"
    assert "title" in after.edited


def test_analyse_again_while_the_card_is_being_analysed_says_so(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.queue.enqueue(JobType.CARD_ANALYSIS, card.scrap_id)
    with pytest.raises(CardEditError, match="already waiting for its analysis"):
        app.analyse_card_again(card.id, replace_edits=False)


def test_analyse_again_while_the_edit_gets_its_vector_says_so(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, CardEdit(title="Docker layer cache"))
    with pytest.raises(CardEditError, match="getting a new vector for its new words"):
        app.analyse_card_again(card.id, replace_edits=False)
    executor(app).drain(JobPool.AI)
    assert app.analyse_card_again(card.id, replace_edits=False).value.status is JobStatus.PENDING


# --- undo ------------------------------------------------------------------------------------------


def test_undo_restores_the_values_the_marks_and_the_days_inputs(app: SanApp) -> None:
    _with_cards(app)
    card = _card(app, DOCKER)
    day = app.til.today()
    app.generate_til(day)
    executor(app).drain(JobPool.AI)
    assert not app.til.get(day).inputs_changed
    edited = app.edit_card(card.id, EDIT).value
    assert app.til.get(day).inputs_changed  # the TIL page says the day's cards changed

    undone = app.undo_card_edit(edited)

    assert app.cards.get(card.id).card == card
    assert undone.changes.cards_of_scraps == {card.scrap_id}
    assert not app.til.get(day).inputs_changed  # the cards are as the note was made from again
    executor(app).drain(JobPool.AI)  # the re-embeddings of the edit and of the undo
    similar = app.cards.similar(card.id)
    assert similar  # a vector again, of the original words


def test_undo_after_the_card_changed_again_is_refused_and_changes_nothing(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    first = app.edit_card(card.id, CardEdit(title="First")).value
    app.edit_card(card.id, CardEdit(title="Second"))
    with pytest.raises(CardEditError, match="changed since"):
        app.undo_card_edit(first)
    assert app.cards.get(card.id).card.title == "Second"


# --- one spelling per tag --------------------------------------------------------------------------


def test_renaming_a_tag_on_every_card_merges_it_into_the_other_and_undo_brings_it_back(app: SanApp) -> None:
    _with_cards(app, [WAL, WAL2])
    wal, wal2 = _card(app, WAL), _card(app, WAL2)
    assert "SQLite WAL" in wal.tags
    assert "SQLite" in wal2.tags
    assert app.card_edits.tag_usage(wal.id)["SQLite WAL"] == 0  # no other card has it

    # wal2 gets "SQLite WAL" too; then on wal, "SQLite WAL" is renamed "SQLite" everywhere
    app.edit_card(wal2.id, CardEdit(tags=(*wal2.tags[:4], "SQLite WAL")))
    assert app.card_edits.tag_usage(wal.id)["SQLite WAL"] == 1
    renamed_tags = tuple("SQLite" if tag == "SQLite WAL" else tag for tag in wal.tags)
    result = app.edit_card(wal.id, CardEdit(tags=renamed_tags, rename_tags=(("SQLite WAL", "SQLite"),))).value

    assert result.others == 1
    assert "SQLite WAL" not in app.cards.get(wal2.id).card.tags
    assert "SQLite" in app.cards.get(wal2.id).card.tags
    assert "SQLite WAL" not in app.cards.get(wal.id).card.tags
    assert app.cards.get(wal2.id).card.edited == ("tags",)  # the person chose its tags too
    with app.db.sessions() as session:
        assert session.scalar(sa.select(Tag.id).where(Tag.name_key == "sqlite wal")) is None  # gone, not left over

    app.undo_card_edit(result)
    assert "SQLite WAL" in app.cards.get(wal.id).card.tags
    assert "SQLite WAL" in app.cards.get(wal2.id).card.tags


def test_a_tag_rename_alone_respells_or_merges_on_every_card(app: SanApp) -> None:
    _with_cards(app, [WAL, WAL2])
    wal, wal2 = _card(app, WAL), _card(app, WAL2)
    respelled = app.rename_tag("sqlite", "SQLITE").value  # one tag, one spelling: on every card that has it
    assert "SQLITE" in app.cards.get(wal2.id).card.tags
    assert respelled.others == 1
    merged = app.rename_tag("SQLite WAL", "sqlite").value
    assert merged.others == 1
    assert app.cards.get(wal.id).card.tags.count("SQLITE") == 1
    with pytest.raises(CardEditError, match="There is no tag “nothing-like-it”"):
        app.rename_tag("nothing-like-it", "x")


# --- a new vector after a new title or summary --------------------------------------------------


def _nearest(app: SanApp, card_id: str) -> list[str]:
    return [item.card.id for item in app.cards.similar(card_id)]


def test_a_new_summary_re_embeds_the_card_in_the_background_and_its_similar_cards_change(app: SanApp) -> None:
    _with_cards(app, [DOCKER, WAL, WAL2, REACT, PIE])
    pie, wal, wal2 = _card(app, PIE), _card(app, WAL), _card(app, WAL2)
    before = app.cards.similar(pie.id)
    assert not before[0].within_threshold  # nothing is close to an apple pie

    result = app.edit_card(
        pie.id,
        CardEdit(summary="SQLite write-ahead logging: readers go on while a writer commits; checkpoints copy pages."),
    ).value

    (job,) = result.jobs
    assert job.job_type is JobType.CARD_ANALYSIS
    assert '"embed_only": true' in (job.payload or "")
    assert _nearest(app, pie.id) == [item.card.id for item in before]  # not yet: the job runs in the background
    executor(app).drain(JobPool.AI)
    after = app.cards.similar(pie.id)
    assert {item.card.id for item in after[:2]} == {wal.id, wal2.id}
    assert after[0].score > before[0].score


def test_a_new_category_or_new_tags_alone_ask_for_no_vector(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    result = app.edit_card(card.id, CardEdit(tags=("Docker",), category="Other")).value
    assert result.jobs == ()
    assert jobs_of(app.queue, JobType.CARD_ANALYSIS, statuses=(JobStatus.PENDING,)) == []


def test_a_new_vector_is_not_a_change_of_the_days_inputs(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.edit_card(card.id, CardEdit(summary="Layers that did not change are reused."))
    day = app.til.today()
    app.generate_til(day)
    assert run_one(app, JobType.TIL_GENERATION).status is JobStatus.COMPLETED  # made while the vector waits
    assert not app.til.get(day).inputs_changed
    executor(app).drain(JobPool.AI)  # the new vector
    assert app.cards.get(card.id).embedding_model is not None
    assert not app.til.get(day).inputs_changed


class HeldAnalysis(LocalProvider):
    """The embedded provider whose card analysis waits until the test lets it go on."""

    def __init__(self) -> None:
        super().__init__()
        self.analysing = threading.Event()
        self.go_on = threading.Event()

    def analyze_card(self, text: str, categories: Sequence[str]) -> CardDraft:
        self.analysing.set()
        assert self.go_on.wait(20)
        return super().analyze_card(text, categories)


def _stored_vector(app: SanApp, card_id: str) -> np.ndarray:
    with app.db.sessions() as session:
        query = sa.select(CardEmbedding.vector, CardEmbedding.dim).where(CardEmbedding.card_id == card_id)
        row = session.execute(query).one()
    return from_stored(row.vector, row.dim)


def test_an_edit_while_the_card_is_being_analysed_gets_its_own_vector_afterwards(
    app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    held = HeldAnalysis()
    monkeypatch.setattr(app.providers, "_provider", held)
    app.queue.enqueue(JobType.CARD_ANALYSIS, card.scrap_id)
    worker = threading.Thread(target=lambda: executor(app).drain(JobPool.AI))
    worker.start()
    assert held.analysing.wait(20)

    new_summary = "Grandma's apple pie needs butter, flour, apples and cinnamon."
    result = app.edit_card(card.id, CardEdit(summary=new_summary)).value
    assert result.jobs == ()  # the running analysis is the card's job: no second one can wait beside it
    held.go_on.set()
    worker.join(30)
    assert not worker.is_alive()
    executor(app).drain(JobPool.AI)  # the vector the running analysis asked for once it saw the edit

    shown = app.cards.get(card.id)
    assert shown.card.summary == new_summary
    assert shown.embedding_model == held.embedding_model
    expected = held.embed([embedding_text(shown.card.title, new_summary, shown.card.tags, DOCKER)])[0]
    assert float(_stored_vector(app, card.id) @ expected) > 0.99


def test_a_vector_made_from_words_the_card_no_longer_has_is_made_again_by_the_sweep(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    with app.db.write() as session:  # what an analysis leaves when it saw an edit but died before asking again
        session.execute(sa.update(KnowledgeCard).where(KnowledgeCard.id == card.id).values(embedding_model=None))
    hooks = [stale_embedding_hook(app.providers)]
    report = sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks)
    assert report.enqueued_by_hooks == 1


# --- the day's TIL ---------------------------------------------------------------------------------


def test_a_til_made_after_the_edit_says_what_the_person_wrote(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_cards(app, [WAL])
    monkeypatch.setattr(app.providers, "_provider", ReanalysingProvider())  # files the Docker card under Frontend
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    assert card.category == "Frontend"
    app.edit_card(card.id, CardEdit(title="Docker layer cache", category="Infra/DevOps", tags=("Docker", "cache")))
    day = app.til.today()
    app.generate_til(day)
    executor(app).drain(JobPool.AI)
    text = til_text(app, day)
    assert "## Frontend" not in text
    section = text.split("## Infra/DevOps", 1)[1].split("\n## ", 1)[0]
    assert "### Docker layer cache" in section
    assert "`#cache`" in section
    assert "Frontend caching" not in text


def test_an_edit_made_by_another_process_reaches_an_open_window(app: SanApp) -> None:
    _with_cards(app, [DOCKER])
    card = _card(app, DOCKER)
    app.poll_external()
    command_line = SanApp(app.backend)  # its own origin, as `san cards edit` beside the window has
    command_line.edit_card(card.id, CardEdit(title="Docker layer cache"))
    changes = app.poll_external()
    assert changes.cards_of_scraps == {card.scrap_id}  # the Cards page, the Inbox row and the TIL page follow
    assert changes.external
