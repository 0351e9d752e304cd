"""Storing an import as one batch: dedupe against the library and within the source, refusals, the source's
tags on the cards, a dry run, a cancel part way, and Undo import leaving the library as it was."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from san_desktop.ai.base import CardDraft
from san_desktop.ai.local import LocalProvider
from san_desktop.app import Changes, SanApp, open_app
from san_desktop.core.enums import JobPool, JobStatus, JobType, SourceType
from san_desktop.core.errors import SanError
from san_desktop.db.tables import import_batches, knowledge_cards, scraps
from san_desktop.queue.errors import JobSupersededError
from san_desktop.queue.records import JobEvent
from san_desktop.transfer import importer as importer_module
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal
from tests.support.cards import all_cards
from tests.support.jobs import jobs_of
from tests.support.library import snapshot
from tests.support.local_jobs import run_all_jobs

WAL = "SQLite WAL mode lets readers continue while a writer commits."
RAFT = "Raft elects a leader, which replicates its log to the followers."
VACUUM = "PostgreSQL VACUUM reclaims the space of dead tuples left by updates."
KOREAN = "쿠버네티스 파드는 하나 이상의 컨테이너를 묶어 같은 네트워크를 공유한다."


def _note(path: str, text: str, *, tags: tuple[str, ...] = (), when: datetime | None = None) -> ImportItem:
    return ImportItem(SourceType.FILE, text, path, title=None, tags=tags, captured_at=when)


def _plan(*items: ImportItem, refused: tuple[Refusal, ...] = ()) -> ImportPlan:
    return ImportPlan(ImportKind.MARKDOWN, "/notes", list(items), list(refused))


def test_an_import_stores_new_notes_once_with_their_jobs_and_says_what_it_left_out(app: SanApp) -> None:
    app.store_import(_plan(_note("old/wal.md", WAL)))  # in the library already
    day = datetime(2024, 3, 4, 9, 30, tzinfo=UTC)
    plan = _plan(
        _note("db/raft.md", RAFT, tags=("distributed", "#consensus"), when=day),
        _note("db/raft copy.md", RAFT),  # the same note twice in the vault
        _note("db/vacuum.md", VACUUM),
        _note("db/wal.md", WAL),  # already in the library
        _note("empty.md", "   \n"),
        ImportItem(SourceType.URL, "https://Example.com/a?utm_source=x", "https://Example.com/a?utm_source=x", "A"),
        ImportItem(SourceType.URL, "javascript:alert(1)", "javascript:alert(1)"),
        refused=(Refusal("pic.png", "an attachment, not a note"),),
    )
    summary = app.store_import(plan).value
    assert (summary.imported, summary.duplicates, summary.merged) == (3, 1, 1)
    assert sorted(r.source_ref for r in summary.refused) == ["empty.md", "javascript:alert(1)", "pic.png"]
    assert "empty" in next(r.reason for r in summary.refused if r.source_ref == "empty.md")
    assert summary.sentence() == (
        "Imported 3 new scraps, 1 already in the library, 1 merged into another, 3 left out from /notes."
    )
    said = {outcome.source_ref: (outcome.outcome.value, outcome.detail) for outcome in summary.outcomes}
    assert said["db/raft copy.md"] == ("merged", "into db/raft.md: listed twice")
    assert said["db/wal.md"] == ("already there", "")
    assert said["db/raft.md"] == ("new", "")
    assert said["pic.png"] == ("left out", "an attachment, not a note")
    assert len(said) == len(plan.items) + len(plan.refused)  # every entry of the source is accounted for
    with app.db.engine.connect() as conn:
        rows = {
            row.source_ref: row
            for row in conn.execute(sa.select(scraps).where(scraps.c.import_batch_id == summary.batch_id))
        }
        batch = conn.execute(sa.select(import_batches).where(import_batches.c.id == summary.batch_id)).one()
    assert set(rows) == {"db/raft.md", "db/vacuum.md", "https://example.com/a"}
    assert json.loads(rows["db/raft.md"].given_tags) == ["distributed", "consensus"]
    assert rows["db/raft.md"].created_at == day  # the note's date is its capture time
    assert rows["https://example.com/a"].title == "A"
    assert (batch.imported, batch.duplicates, batch.refused, batch.id) == (3, 1, 3, summary.batch_id)
    assert batch.finished_at is not None
    jobs = {(job.job_type, job.target_id) for job in jobs_of(app.queue) if job.target_id in summary.scrap_ids}
    raft = rows["db/raft.md"].id
    assert (JobType.CARD_ANALYSIS, raft) in jobs
    assert (JobType.SCRAP_REFINE, raft) in jobs
    assert (JobType.PAGE_FETCH, rows["https://example.com/a"].id) in jobs  # the page comes by the fetch job

    again = app.store_import(plan).value  # the same source again: nothing new
    assert (again.imported, again.duplicates, again.merged, again.batch_id) == (0, 4, 1, None)
    with app.db.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(import_batches)) == 2  # no empty batch


def test_a_dry_run_counts_without_storing(app: SanApp) -> None:
    app.store_import(_plan(_note("a.md", RAFT)))
    before = snapshot(app.db)
    summary = app.store_import(_plan(_note("a.md", RAFT), _note("b.md", VACUUM), _note("c.md", "")), dry_run=True).value
    assert (summary.imported, summary.duplicates, len(summary.refused), summary.batch_id) == (1, 1, 1, None)
    assert summary.sentence().startswith("Would import 1 new scrap,")
    assert snapshot(app.db) == before


def test_the_source_tags_are_the_cards_tags_and_analysing_again_keeps_them(app: SanApp) -> None:
    summary = app.store_import(_plan(_note("k8s.md", KOREAN, tags=("쿠버네티스", "infra")), _note("w.md", WAL))).value
    run_all_jobs(app.queue, app.backend.require_session())
    cards = {card.scrap_id: card for card in all_cards(app.db)}
    tagged, plain = (cards[scrap_id] for scrap_id in summary.scrap_ids)
    assert sorted(tagged.tags) == ["infra", "쿠버네티스"]
    assert plain.tags  # the analysis's own tags where the source gave none
    with app.db.engine.connect() as conn:
        edited = conn.scalar(sa.select(knowledge_cards.c.tags_edited).where(knowledge_cards.c.id == tagged.id))
    assert edited  # kept as a person's tags are
    app.analyse_card_again(tagged.id, replace_edits=False)
    run_all_jobs(app.queue, app.backend.require_session())
    assert sorted(next(c for c in all_cards(app.db) if c.id == tagged.id).tags) == ["infra", "쿠버네티스"]


def test_undo_import_moves_it_to_the_trash_whole_and_emptying_leaves_the_library_as_it_was(app: SanApp) -> None:
    app.capture_text(WAL)
    app.store_import(_plan(_note("first.md", VACUUM)))  # an earlier import stays
    run_all_jobs(app.queue, app.backend.require_session())
    before = snapshot(app.db, leave_out=frozenset({"import_batches"}))
    summary = app.store_import(
        _plan(_note("raft.md", RAFT, tags=("brand-new-tag",)), _note("k8s.md", KOREAN), _note("wal.md", WAL))
    ).value
    run_all_jobs(app.queue, app.backend.require_session())
    assert len(all_cards(app.db)) == 5
    assert summary.batch_id is not None
    imported = snapshot(app.db)
    trashed = app.undo_import(summary.batch_id).value
    assert sorted(trashed.scrap_ids) == sorted(summary.scrap_ids)
    assert len(app.scraps.list_scraps()) == 2
    assert len(app.cards.list_cards()) == 2
    assert [batch.id for batch in app.imports.batches()] != [summary.batch_id]  # not offered again
    with pytest.raises(SanError, match="undone already"):
        app.undo_import(summary.batch_id)
    [entry] = app.trash.entries()
    assert (entry.id, entry.scraps, entry.cards) == (trashed.entry_id, 3, 3)
    assert entry.describe() == "3 scraps imported from /notes"

    assert trashed.entry_id is not None
    app.restore_from_trash(trashed.entry_id)  # all of it back, the import undoable again
    assert snapshot(app.db) == imported
    assert summary.batch_id in [batch.id for batch in app.imports.batches()]

    app.undo_import(summary.batch_id)
    emptied = app.empty_trash().value
    assert (emptied.entries, emptied.scraps) == (1, 3)
    assert snapshot(app.db, leave_out=frozenset({"import_batches"})) == before  # its tag and vectors too


def _undone_with_its_analysis_asked_again(app: SanApp) -> tuple[str, list[JobEvent]]:
    """An import undone (its jobs cancelled), then its analysis retried from the Jobs page meanwhile; the job,
    and what the queue's listeners hear from then on."""
    summary = app.store_import(_plan(_note("raft.md", RAFT))).value
    assert summary.batch_id is not None
    app.undo_import(summary.batch_id)
    [analysis] = jobs_of(app.queue, JobType.CARD_ANALYSIS)
    app.queue.retry(analysis.id)
    heard: list[JobEvent] = []
    app.queue.add_listener(heard.append)
    return analysis.id, heard


def test_emptying_the_trash_of_an_undone_import_cancels_its_waiting_job_and_says_so(app: SanApp) -> None:
    job_id, heard = _undone_with_its_analysis_asked_again(app)
    assert app.empty_trash().value.scraps == 1
    assert [(event.job_id, event.old_status, event.new_status) for event in heard] == [
        (job_id, JobStatus.PENDING, JobStatus.CANCELLED)
    ]
    assert jobs_of(app.queue) == []  # the scrap's jobs went with it


def test_emptying_the_trash_of_an_undone_import_stops_its_running_job_and_keeps_its_row_for_the_worker(
    app: SanApp,
) -> None:
    job_id, heard = _undone_with_its_analysis_asked_again(app)
    claim = app.queue.claim_next(app.backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
    assert claim is not None
    assert claim.job.id == job_id
    heard.clear()
    app.empty_trash()
    assert [(event.job_id, event.old_status, event.new_status) for event in heard] == [
        (job_id, JobStatus.PROCESSING, JobStatus.CANCELLED)  # (the runner asks the attempt to stop)
    ]
    with pytest.raises(JobSupersededError):  # its worker's result is dropped
        app.queue.complete(claim)
    assert [(job.id, job.status) for job in jobs_of(app.queue)] == [(job_id, JobStatus.CANCELLED)]


def test_a_cancelled_import_keeps_what_it_stored_as_a_batch_to_undo(
    app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer_module, "CHUNK", 2)
    seen: list[tuple[int, int]] = []
    notes = [_note(f"n{i}.md", f"Note number {i}: {RAFT}") for i in range(5)]
    summary = app.store_import(
        _plan(*notes), cancelled=lambda: len(seen) >= 1, progress=lambda *p: seen.append(p)
    ).value
    assert seen == [(2, 5)]
    assert summary.batch_id is not None
    assert (summary.imported, summary.cancelled) == (2, True)
    assert summary.sentence().startswith("Stopped part way: imported 2 new scraps")
    with app.db.engine.connect() as conn:
        batch = conn.execute(sa.select(import_batches)).one()
    assert (batch.imported, batch.finished_at) == (2, None)
    assert [info.id for info in app.imports.batches()] == [summary.batch_id]
    assert sorted(app.undo_import(summary.batch_id).value.scrap_ids) == sorted(summary.scrap_ids)
    assert app.scraps.list_scraps() == []


def test_undo_while_an_analysis_of_the_batch_waits_cancels_its_jobs(app: SanApp) -> None:
    summary = app.store_import(_plan(_note("raft.md", RAFT))).value
    assert summary.batch_id is not None
    app.undo_import(summary.batch_id)
    assert {job.status for job in jobs_of(app.queue)} == {JobStatus.CANCELLED}
    assert run_all_jobs(app.queue, app.backend.require_session()) == 0


def test_an_analysis_that_finishes_after_its_import_was_undone_makes_no_card(
    app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = app.store_import(_plan(_note("raft.md", RAFT))).value
    assert summary.batch_id is not None
    batch_id = summary.batch_id
    analyse = LocalProvider.analyze_card

    def analyse_then_undo(provider: LocalProvider, text: str, categories: Sequence[str]) -> CardDraft:
        draft = analyse(provider, text, categories)
        app.undo_import(batch_id)  # while the job runs: its scrap and its job row go
        return draft

    monkeypatch.setattr(LocalProvider, "analyze_card", analyse_then_undo)
    run_all_jobs(app.queue, app.backend.require_session())
    assert all_cards(app.db) == []
    assert app.scraps.list_scraps() == []
    # the job that ran was cancelled (its worker finished it), as were the scrap's others: none failed
    assert sorted((job.job_type, job.status) for job in jobs_of(app.queue)) == [
        (JobType.CARD_ANALYSIS, JobStatus.CANCELLED),
        (JobType.SCRAP_REFINE, JobStatus.CANCELLED),
    ]


def test_an_import_beside_the_window_is_told_to_it_as_the_library_changed(app: SanApp) -> None:
    """Another process's import of hundreds of notes: the window reads its pages again, not 300 rows."""
    app.poll_external()
    with open_app(app.data_dir, kind="cli", lock=False, log_to_stderr=False) as other:
        other.store_import(_plan(*(_note(f"n{i}.md", f"Note {i}: {RAFT}") for i in range(300))))
        other.capture_text(WAL)
    changes = app.poll_external()
    assert changes.library
    assert changes.external
    assert changes.scraps == frozenset()
    with open_app(app.data_dir, kind="cli", lock=False, log_to_stderr=False) as other:
        one = other.capture_text(VACUUM).value
    assert app.poll_external().scraps == {one.scrap_id}  # a few: told one by one, as before


def test_new_jobs_alone_do_not_ask_pages_to_read_their_scraps(app: SanApp) -> None:
    """An import's thousands of new jobs: pages learn of its scraps from its end, not a read a tick each;
    a scrap whose other job moved on is read as before."""
    quiet, moving = (app.capture_text(text).value for text in (RAFT, VACUUM))
    job_ids = (quiet.analysis_job_id, quiet.refine_job_id, moving.refine_job_id)
    fresh = [app.queue.get(job_id or "") for job_id in job_ids]
    claimed = app.queue.claim_next(app.backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
    assert claimed is not None
    changes = Changes.merge(Changes.of_job(job) for job in [*fresh, app.queue.get(claimed.job.id)])
    assert claimed.job.target_id in {quiet.scrap_id, moving.scrap_id}
    expected = {quiet.scrap_id, moving.scrap_id} - {claimed.job.target_id}
    assert changes.new_scrap_jobs == expected
