"""Capture (seed 001): one transaction for a scrap and its jobs, dedupe, rejections, delete and undo."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JobStatus, JobType, SourceType
from san_desktop.core.settings import JobSettings
from san_desktop.core.text import RejectedContentError
from san_desktop.db.models import AsyncJob, Scrap
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore
from san_desktop.services import scraps as services_scraps
from san_desktop.services.recovery.sweep import sweep
from san_desktop.services.scraps import ScrapService, orphan_hook
from tests.support.cards import all_cards
from tests.support.jobs import jobs_of
from tests.support.local_jobs import run_all_jobs

TEXT = "SQLite WAL mode lets readers continue while a writer commits."


@pytest.fixture
def scraps(backend: Backend, queue: JobStore) -> ScrapService:
    return ScrapService(backend.db, queue, max_bytes=10_000)


def _jobs(queue: JobStore) -> list[tuple[JobType, str, JobStatus]]:
    return sorted((j.job_type, j.target_id, j.status) for j in jobs_of(queue))


def test_a_new_scrap_comes_with_its_two_jobs(scraps: ScrapService, queue: JobStore) -> None:
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    result = scraps.capture("  " + TEXT + "\r\n")
    assert result.created
    info = scraps.get(result.scrap_id)
    assert info.content == TEXT
    assert _jobs(queue) == [
        (JobType.CARD_ANALYSIS, result.scrap_id, JobStatus.PENDING),
        (JobType.SCRAP_REFINE, result.scrap_id, JobStatus.PENDING),
    ]
    assert {e.job_id for e in events} == {result.analysis_job_id, result.refine_job_id}


def test_the_same_text_twice_is_one_scrap(scraps: ScrapService, queue: JobStore) -> None:
    first = scraps.capture(TEXT)
    again = scraps.capture(TEXT.replace("\n", "\r\n") + "\n\n")
    assert again.duplicate
    assert again.scrap_id == first.scrap_id
    assert again.analysis_job_id == first.analysis_job_id  # the waiting analysis, not a new one
    assert len(scraps.list_scraps()) == 1
    assert len(jobs_of(queue)) == 2
    # the same content from another source type is another scrap (unique per source type)
    assert scraps.capture_url("https://sqlite.org/wal.html").created


def test_a_duplicate_without_card_and_without_analysis_gets_analysed_again(
    scraps: ScrapService, queue: JobStore, backend: Backend
) -> None:
    first = scraps.capture(TEXT)
    assert first.analysis_job_id is not None
    queue.cancel(first.analysis_job_id)
    again = scraps.capture(TEXT)
    assert again.duplicate
    assert again.analysis_job_id not in (None, first.analysis_job_id)
    run_all_jobs(queue, backend.require_session())
    assert scraps.capture(TEXT).analysis_job_id is None  # it has a card now


def test_concurrent_captures_of_the_same_text_leave_one_scrap(scraps: ScrapService, queue: JobStore) -> None:
    barrier = threading.Barrier(6)
    results: list[str] = []
    errors: list[BaseException] = []

    def capture() -> None:
        barrier.wait()
        try:
            results.append(scraps.capture(TEXT).scrap_id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=capture) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(set(results)) == 1
    assert [j.job_type for j in jobs_of(queue)].count(JobType.CARD_ANALYSIS) == 1


@pytest.mark.parametrize(
    ("content", "reason"),
    [("", "empty"), ("   \n\t", "empty"), ("x" * 20_000, "Too large"), ("a\x00b", "binary")],
)
def test_rejected_content_stores_nothing(scraps: ScrapService, queue: JobStore, content: str, reason: str) -> None:
    with pytest.raises(RejectedContentError, match=reason):
        scraps.capture(content)
    assert scraps.list_scraps() == []
    assert jobs_of(queue) == []


def test_files(scraps: ScrapService, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# WAL\n\nReaders and a writer at once.", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text("<h1>MVCC</h1><p>Old versions stay until <b>VACUUM</b>.</p>", encoding="utf-8")
    binary = tmp_path / "data.txt"
    binary.write_bytes(b"\x00\x01\x02\x03" * 100)
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG")
    md = scraps.get(scraps.capture_file(note).scrap_id)
    assert (md.source_type, md.source_ref) == (SourceType.FILE, "note.md")
    html = scraps.get(scraps.capture_file(page).scrap_id)
    assert html.content == "# MVCC\n\nOld versions stay until VACUUM."  # the heading kept apart
    with pytest.raises(RejectedContentError, match="binary"):
        scraps.capture_file(binary)
    with pytest.raises(RejectedContentError, match="only text files"):
        scraps.capture_file(image)
    with pytest.raises(RejectedContentError, match=r"No such file: .*missing\.txt"):
        scraps.capture_file(tmp_path / "missing.txt")
    with pytest.raises(RejectedContentError, match="is a folder, not a file"):
        scraps.capture_file(tmp_path)
    assert len(scraps.list_scraps()) == 2


def test_html_keeps_its_source(scraps: ScrapService, backend: Backend) -> None:
    markup = "<p>Use <code>EXPLAIN QUERY PLAN</code> to see index use.</p>"
    result = scraps.capture_html(markup)
    with backend.db.sessions() as session:
        scrap = session.get(Scrap, result.scrap_id)
        assert scrap is not None
        assert scrap.content == "Use EXPLAIN QUERY PLAN to see index use."
        assert scrap.raw_content == markup
        assert scrap.source_type is SourceType.HTML


def test_an_html_source_over_the_limit_is_not_kept_but_its_text_is(scraps: ScrapService, backend: Backend) -> None:
    styled = "<p style='" + "color: red; " * 2000 + "'>Partial indexes need a WHERE clause.</p>"
    assert len(styled) > scraps.max_bytes
    result = scraps.capture_html(styled)
    with backend.db.sessions() as session:
        scrap = session.get(Scrap, result.scrap_id)
        assert scrap is not None
        assert scrap.content == "Partial indexes need a WHERE clause."
        assert scrap.raw_content is None


def test_deleting_a_scrap_cancels_its_waiting_jobs_and_restoring_it_asks_for_its_work_again(
    scraps: ScrapService, queue: JobStore, backend: Backend
) -> None:
    result = scraps.capture(TEXT)
    scraps.delete(result.scrap_id)
    assert scraps.list_scraps() == []
    assert {job.status for job in jobs_of(queue)} == {JobStatus.CANCELLED}  # not failed: nothing went wrong
    assert run_all_jobs(queue, backend.require_session()) == 0
    scraps.restore(result.scrap_id)
    assert [s.id for s in scraps.list_scraps()] == [result.scrap_id]
    assert run_all_jobs(queue, backend.require_session()) == 2  # its analysis and refinement, asked for again
    info = scraps.get(result.scrap_id)
    assert info.card_title is not None
    assert info.refined


def test_processing_makes_one_card_and_a_refined_text_however_often_it_runs(
    scraps: ScrapService, queue: JobStore, backend: Backend
) -> None:
    result = scraps.capture(TEXT + "\n\n\n\nReaders   keep reading.")
    assert run_all_jobs(queue, backend.require_session()) == 2
    info = scraps.get(result.scrap_id)
    assert info.card_title is not None
    assert info.refined
    with backend.db.sessions() as session:
        refined = session.scalar(sa.select(Scrap.refined_content))
    assert refined == TEXT + "\n\nReaders keep reading."
    queue.enqueue(JobType.CARD_ANALYSIS, result.scrap_id)  # analyse again
    run_all_jobs(queue, backend.require_session())
    assert len(all_cards(backend.db)) == 1


def test_a_refinement_that_changes_nothing_keeps_no_second_copy(
    scraps: ScrapService, queue: JobStore, backend: Backend
) -> None:
    result = scraps.capture(TEXT)  # already tidy
    assert run_all_jobs(queue, backend.require_session()) == 2
    assert scraps.get(result.scrap_id).refined  # refined, not waiting for it
    with backend.db.sessions() as session:
        assert session.scalar(sa.select(Scrap.refined_content)) == ""
    assert len(all_cards(backend.db)) == 1


def test_the_sweep_enqueues_many_orphans_in_short_transactions(
    scraps: ScrapService, queue: JobStore, backend: Backend, job_settings: JobSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services_scraps, "SWEEP_HOOK_BATCH", 3)
    ids = [scraps.capture(f"{TEXT} number {n}").scrap_id for n in range(5)]
    with backend.db.write() as session:  # as if the jobs had been lost
        session.execute(sa.delete(AsyncJob))
    transactions = 0
    real_write = backend.db.write

    @contextmanager
    def counting_write() -> Iterator[Session]:
        nonlocal transactions
        transactions += 1
        with real_write() as session:
            yield session

    monkeypatch.setattr(backend.db, "write", counting_write)
    report = sweep(queue, backend.require_session(), job_settings, hooks=[orphan_hook])
    assert report.enqueued_by_hooks == 10  # every scrap: a card and a refined text
    assert sorted(target for _type, target, _status in _jobs(queue)) == sorted(ids * 2)
    assert transactions == 1 + 5  # the sweep's own, then 3 + 3 + 3 + 1 and a last round that finds none


def test_orphan_hook_finds_scraps_without_card_or_refined_text(
    scraps: ScrapService, queue: JobStore, backend: Backend, job_settings: object
) -> None:
    result = scraps.capture(TEXT)
    with backend.db.write() as session:  # as if the jobs had been lost
        session.execute(sa.delete(AsyncJob))
    report = sweep(queue, backend.require_session(), job_settings, hooks=[orphan_hook])  # type: ignore[arg-type]
    assert report.enqueued_by_hooks == 2
    assert _jobs(queue) == [
        (JobType.CARD_ANALYSIS, result.scrap_id, JobStatus.PENDING),
        (JobType.SCRAP_REFINE, result.scrap_id, JobStatus.PENDING),
    ]
    assert sweep(queue, backend.require_session(), job_settings, hooks=[orphan_hook]).enqueued_by_hooks == 0  # type: ignore[arg-type]


def test_orphan_hook_leaves_a_scrap_whose_job_the_user_cancelled(
    scraps: ScrapService, queue: JobStore, backend: Backend, job_settings: object
) -> None:
    result = scraps.capture(TEXT)
    for job in jobs_of(queue):
        queue.cancel(job.id)  # the user cancelled both in the job monitor
    report = sweep(queue, backend.require_session(), job_settings, hooks=[orphan_hook])  # type: ignore[arg-type]
    assert report.enqueued_by_hooks == 0
    assert {status for _type, target, status in _jobs(queue) if target == result.scrap_id} == {JobStatus.CANCELLED}


def test_lone_surrogates_in_a_pages_title_or_address_are_stored_replaced(
    scraps: ScrapService, backend: Backend
) -> None:
    """What the browser extension sends is JSON, whose ``\\ud800`` escapes decode to lone surrogates that no
    database stores (the capture fuzz test found one in a title: a 500 and a traceback). A title and a source
    are kept as given, with U+FFFD for them; the text itself is refused as not valid text, as before."""
    page = scraps.capture_page("https://u:p@b.example/", "\x7f\ud85b A title", "A page about B-trees and their pages.")
    odd = scraps.capture_page("https://b.example/\ud800", "", "Another page about LSM trees and compaction.")
    selection = scraps.capture("A selection about WAL.", SourceType.HTML, "https://b\udc00.example/x")
    with backend.db.sessions() as session:
        stored = {scrap.id: scrap for scrap in session.scalars(sa.select(Scrap))}
    assert stored[page.scrap_id].title == "\x7f\ufffd A title"
    assert stored[page.scrap_id].source_ref == "https://b.example/"
    assert stored[odd.scrap_id].source_ref == "https://b.example/\ufffd"
    assert stored[selection.scrap_id].source_ref == "https://b\ufffd.example/x"
