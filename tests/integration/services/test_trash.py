"""The Trash (issue 38, item 4): a deleted scrap, several deleted at once, and an undone import are each one
entry, shown nowhere (inbox, cards, search, similar cards, a day's TIL, quizzes due, exports) yet restorable
with the card's edits, its quizzes and their answers; their jobs end cancelled, never failed, and come back
with them; the same text scrapped again is a new scrap (the copy in the Trash stays there); emptying deletes
for good; the recovery sweep purges what is older than ``trash.keep_days``. On either database."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.core.enums import JobStatus, JobType, SourceType, TrashKind
from san_desktop.core.errors import SanError
from san_desktop.core.settings import with_value
from san_desktop.db.tables import knowledge_cards, scraps, trash_entries
from san_desktop.jobs.processors import registry_for
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.recovery.sweep import sweep
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan
from tests.support.jobs import jobs_of
from tests.support.local_jobs import run_all_jobs
from tests.support.til import cards_of, quizzes_of_today

RAFT = "Raft elects a leader with randomised election timeouts; the leader replicates its log to followers."
BTREE = "A B-tree keeps its keys sorted in pages so that a lookup reads only a few pages from disk."
WAL = "SQLite WAL mode lets readers continue while a writer commits to the database file."


def _card_of(app: SanApp, text_start: str) -> Any:
    return next(card for card in app.cards.list_cards() if app.scraps.get(card.scrap_id).content.startswith(text_start))


def _kept_with(app: SanApp, card_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """The rows a card's delete must keep and its restore bring back: the card, its tags, vector, quizzes
    and their answers."""
    from san_desktop.db.models import CardEmbedding, RecallQuiz, RecallQuizReview, card_tags

    with app.db.engine.connect() as conn:
        quizzes = sa.select(RecallQuiz.id).where(RecallQuiz.card_id == card_id)
        found = {
            "card": conn.execute(sa.select(knowledge_cards).where(knowledge_cards.c.id == card_id)).all(),
            "tags": conn.execute(sa.select(card_tags).where(card_tags.c.card_id == card_id)).all(),
            "vector": conn.execute(sa.select(CardEmbedding.__table__).where(CardEmbedding.card_id == card_id)).all(),
            "quizzes": conn.execute(sa.select(RecallQuiz.__table__).where(RecallQuiz.card_id == card_id)).all(),
            "answers": conn.execute(
                sa.select(RecallQuizReview.__table__).where(RecallQuizReview.quiz_id.in_(quizzes))
            ).all(),
        }
    return {name: sorted((tuple(row) for row in rows), key=repr) for name, rows in found.items()}


def test_a_deleted_scrap_shows_nowhere_and_comes_back_with_its_edits_quizzes_and_answers(
    app: SanApp, tmp_path: Path
) -> None:
    day = quizzes_of_today(app, (RAFT, BTREE))
    raft, btree = _card_of(app, "Raft"), _card_of(app, "A B-tree")
    app.edit_card(raft.id, CardEdit(title="Leader election"))
    answered = next(quiz for quiz in app.quizzes.due() if quiz.card_id == raft.id)
    app.answer_quiz(answered.id, 3, 1500)
    kept = _kept_with(app, raft.id)
    assert kept["answers"]
    assert kept["quizzes"]
    assert kept["vector"]
    before_anki = app.export_anki(tmp_path / "before.apkg", cards=True)

    app.delete_scrap(raft.scrap_id)

    assert [s.id for s in app.scraps.list_scraps()] == [btree.scrap_id]  # the inbox
    assert [c.id for c in app.cards.list_cards()] == [btree.id]  # the cards
    assert raft.id not in {found.card.id for found in app.cards.search("leader election Raft")}  # search
    assert raft.id not in {similar.card.id for similar in app.cards.similar(btree.id)}  # similar cards
    til_cards, _revision = app.til.collect(day)
    assert [card.card_id for card in til_cards] == [btree.id]  # a day's TIL
    assert {quiz.card_id for quiz in app.quizzes.due()} == {btree.id}  # quizzes due
    after_anki = app.export_anki(tmp_path / "after.apkg", cards=True)  # exports
    assert (after_anki.cards, after_anki.quizzes) == (before_anki.cards - 1, before_anki.quizzes - 2)
    assert app.export_markdown(tmp_path / "vault").cards == 1
    [entry] = app.trash.entries()
    assert (entry.id, entry.kind, entry.label) == (raft.scrap_id, TrashKind.SCRAP, "Leader election")
    assert (entry.scraps, entry.cards, entry.quizzes) == (1, 1, 2)
    assert entry.purge_at - entry.deleted_at == timedelta(days=30)
    assert _kept_with(app, raft.id) == kept  # waiting in the Trash, as it was

    restored = app.restore_from_trash(entry.id).value
    assert restored.scrap_ids == (raft.scrap_id,)
    assert _kept_with(app, raft.id) == kept  # the edit, the quizzes, the answer: all back
    assert app.cards.get(raft.id).card.title == "Leader election"
    assert raft.id in {found.card.id for found in app.cards.search("Leader election")}
    assert app.trash.entries() == []


def test_several_deleted_at_once_are_one_entry_restored_as_one(app: SanApp) -> None:
    ids = [app.capture_text(text).value.scrap_id for text in (RAFT, BTREE, WAL)]
    kept = app.capture_text("Kept: not deleted.").value.scrap_id
    trashed = app.delete_scraps(ids).value
    assert sorted(trashed.scrap_ids) == sorted(ids)
    [entry] = app.trash.entries()
    assert (entry.kind, entry.scraps, entry.id) == (TrashKind.SCRAPS, 3, trashed.entry_id)
    assert entry.describe().startswith("3 scraps: Raft elects a leader")
    assert [s.id for s in app.scraps.list_scraps()] == [kept]
    app.restore_from_trash(entry.id)
    assert sorted(s.id for s in app.scraps.list_scraps()) == sorted([*ids, kept])


def test_deleting_what_is_not_there_moves_nothing(app: SanApp) -> None:
    live = app.capture_text(RAFT).value.scrap_id
    with pytest.raises(SanError, match="There is no scrap with id nowhere"):
        app.delete_scraps([live, "nowhere"])
    assert [s.id for s in app.scraps.list_scraps()] == [live]
    app.delete_scrap(live)
    with pytest.raises(SanError, match=f"There is no scrap with id {live}"):
        app.delete_scrap(live)  # in the Trash already
    with pytest.raises(SanError, match="nothing in the Trash with id nowhere"):
        app.restore_from_trash("nowhere")


def _plan(*texts: str) -> ImportPlan:
    items = [ImportItem(SourceType.FILE, text, f"note{n}.md") for n, text in enumerate(texts)]
    return ImportPlan(ImportKind.MARKDOWN, "/notes", items, [])


def test_an_undone_import_is_one_entry_that_brings_back_the_edits_made_since(app: SanApp) -> None:
    summary = app.store_import(_plan(RAFT, BTREE, WAL)).value
    assert summary.batch_id is not None
    run_all_jobs(app.queue, app.backend.require_session())
    raft = _card_of(app, "Raft")
    app.edit_card(raft.id, CardEdit(summary="Leaders, terms and logs."))
    preview = app.undo_import_preview(summary.batch_id)
    assert (preview.scraps, preview.edited, preview.answered) == (3, 1, 0)
    assert "1 of them was edited since the import" in preview.question("2026-12-06 10:00")

    trashed = app.undo_import(summary.batch_id).value
    assert app.scraps.list_scraps() == []
    [entry] = app.trash.entries()
    assert (entry.kind, entry.scraps, entry.cards, entry.describe()) == (
        TrashKind.IMPORT,
        3,
        3,
        "3 scraps imported from /notes",
    )
    assert app.imports.batches() == []

    app.restore_from_trash(entry.id)
    assert sorted(s.id for s in app.scraps.list_scraps()) == sorted(trashed.scrap_ids)
    assert app.cards.get(raft.id).card.summary == "Leaders, terms and logs."
    assert [batch.id for batch in app.imports.batches()] == [summary.batch_id]  # undoable again


def test_the_same_text_scrapped_again_is_a_new_scrap_and_the_copy_in_the_trash_stays_there(app: SanApp) -> None:
    first = app.capture_text(RAFT).value.scrap_id
    app.delete_scrap(first)
    again = app.capture_text(RAFT).value
    assert again.created  # a new scrap, with its own card to come
    assert again.scrap_id != first
    with pytest.raises(SanError, match="scrapped again since it was deleted"):
        app.restore_scrap(first)
    assert [entry.id for entry in app.trash.entries()] == [first]  # still restorable once the new one goes
    app.delete_scrap(again.scrap_id)
    app.restore_scrap(first)
    assert [s.id for s in app.scraps.list_scraps()] == [first]

    # of an entry of several, what can come back does; the copy scrapped again stays, and it is said
    summary = app.store_import(_plan(BTREE, WAL)).value
    assert summary.batch_id is not None
    app.undo_import(summary.batch_id)
    newer = app.store_import(_plan(WAL)).value  # the same note imported again
    [entry] = [entry for entry in app.trash.entries() if entry.kind is TrashKind.IMPORT]
    restored = app.restore_from_trash(entry.id).value
    assert (len(restored.scrap_ids), len(restored.kept)) == (1, 1)
    assert restored.sentence() == (
        "Restored 1 scrap. 1 scrap stays in the Trash: the same content was scrapped again since, and that newer "
        "scrap is the one kept."
    )
    live = {s.id for s in app.scraps.list_scraps()}
    assert restored.scrap_ids[0] in live
    assert newer.scrap_ids[0] in live
    assert restored.kept[0] not in live
    assert [e.scraps for e in app.trash.entries() if e.id == entry.id] == [1]


def test_deleting_cancels_the_work_and_restoring_asks_for_what_the_delete_stopped(app: SanApp) -> None:
    link = app.capture_url("https://example.com/article").value
    text = app.capture_text(RAFT).value
    assert text.analysis_job_id is not None
    app.cancel_job(text.analysis_job_id)  # the person's own cancel, before the delete: it stays cancelled
    app.delete_scraps([link.scrap_id, text.scrap_id])
    assert {job.status for job in jobs_of(app.queue)} == {JobStatus.CANCELLED}  # none failed
    [entry] = app.trash.entries()
    app.restore_from_trash(entry.id)
    waiting = {(job.job_type, job.target_id) for job in jobs_of(app.queue, statuses=(JobStatus.PENDING,))}
    assert waiting == {(JobType.PAGE_FETCH, link.scrap_id), (JobType.SCRAP_REFINE, text.scrap_id)}


def test_emptying_the_trash_deletes_its_scraps_cards_quizzes_and_jobs_for_good(app: SanApp) -> None:
    quizzes_of_today(app, (RAFT, BTREE))
    raft = _card_of(app, "Raft")
    app.delete_scrap(raft.scrap_id)
    planned = app.trash.empty(dry_run=True)
    assert (planned.entries, planned.scraps) == (1, 1)
    assert planned.question().startswith("Delete the 1 item (1 scrap with their cards and quizzes) in the Trash")
    assert len(app.trash.entries()) == 1  # (a dry run)
    emptied = app.empty_trash().value
    assert (emptied.entries, emptied.scraps, emptied.scrap_ids) == (1, 1, (raft.scrap_id,))
    assert _kept_with(app, raft.id) == {"card": [], "tags": [], "vector": [], "quizzes": [], "answers": []}
    assert [job for job in jobs_of(app.queue) if job.target_id == raft.scrap_id] == []
    with app.db.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(scraps).where(scraps.c.id == raft.scrap_id)) == 0
    assert app.trash.entries() == []
    assert app.trash.empty().sentence() == "The Trash is empty."


def _age(app: SanApp, entry_id: str, days: float) -> None:
    with app.db.write_connection() as conn:
        conn.execute(
            sa.update(trash_entries)
            .where(trash_entries.c.id == entry_id)
            .values(deleted_at=app.queue.clock() - timedelta(days=days))
        )


@pytest.mark.parametrize("database", ["the run's", pytest.param("PostgreSQL", marks=pytest.mark.postgresql)])
def test_the_sweep_purges_what_was_deleted_longer_ago_than_trash_keep_days(app: SanApp, database: str) -> None:
    cards_of(app, (RAFT, BTREE, WAL))
    old, recent, live = (_card_of(app, start) for start in ("Raft", "A B-tree", "SQLite"))
    app.delete_scrap(old.scrap_id)
    app.delete_scrap(recent.scrap_id)
    _age(app, old.scrap_id, 31)
    _age(app, recent.scrap_id, 2)
    hooks = registry_for(app).sweep_hooks

    sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks)
    assert [entry.id for entry in app.trash.entries()] == [recent.scrap_id]
    assert _kept_with(app, old.id)["card"] == []
    assert old.id not in {similar.card.id for similar in app.cards.similar(live.id)}

    app.save_settings(with_value(app.settings, "trash", "keep_days", 1))
    sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks)
    assert app.trash.entries() == []
    assert [card.id for card in app.cards.list_cards()] == [live.id]
