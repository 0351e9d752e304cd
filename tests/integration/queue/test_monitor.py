"""The job monitor's queries and bulk actions: filters with live counts, batched retry and cancel,
failures grouped by error signature."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JOB_POOLS, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.errors import TransientError
from san_desktop.queue import store as store_module
from san_desktop.queue.monitor import JobFilter, JobMonitor, error_signature
from san_desktop.queue.records import Classification, JobEvent
from san_desktop.queue.store import JobStore
from tests.support.jobs import insert_jobs

FAILED = frozenset({JobStatus.FAILED})


@pytest.fixture
def monitor(queue: JobStore) -> JobMonitor:
    return JobMonitor(queue)


def test_filters_combine_and_counts_ignore_the_status_part(queue: JobStore, monitor: JobMonitor) -> None:
    failed_cards = insert_jobs(queue, 3, error="TransientError: AI server answered 500")
    insert_jobs(queue, 2, job_type=JobType.TIL_GENERATION, error="PermanentError: no cards that day")
    insert_jobs(queue, 4, status=JobStatus.COMPLETED, error=None, target=lambda n: f"done-{n}")

    only_failed_cards = JobFilter(FAILED, frozenset({JobType.CARD_ANALYSIS}))
    assert sorted(job.id for job in monitor.list_jobs(only_failed_cards)) == sorted(failed_cards)
    assert monitor.counts(only_failed_cards) == {
        JobStatus.PENDING: 0,
        JobStatus.PROCESSING: 0,
        JobStatus.COMPLETED: 4,
        JobStatus.FAILED: 3,
        JobStatus.CANCELLED: 0,
    }
    by_error = monitor.list_jobs(JobFilter(error_contains="no cards"))
    assert [job.job_type for job in by_error] == [JobType.TIL_GENERATION] * 2
    assert len(monitor.list_jobs(JobFilter(text="answered 500"))) == 3
    assert [job.id for job in monitor.list_jobs(JobFilter(text=failed_cards[1]))] == [failed_cards[1]]
    assert len(monitor.list_jobs(JobFilter(text="100%"))) == 0  # LIKE wildcards are literal


def test_the_text_filter_finds_a_job_by_its_cards_title(queue: JobStore, monitor: JobMonitor) -> None:
    insert_jobs(queue, 1, target=lambda _n: "scrap-x")
    with queue.db.write_cursor() as cursor:
        cursor.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('scrap-x', 'TEXT', 'text', 'h', '2026-01-01 00:00:00')"
        )
        cursor.execute(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES ('card-x', 'scrap-x', 'Write-ahead logging in SQLite', 's', "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
    assert [job.target_id for job in monitor.list_jobs(JobFilter(text="ahead log"))] == ["scrap-x"]


def test_bulk_retry_queues_every_match_in_batches_announcing_each(
    queue: JobStore, monitor: JobMonitor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "BULK_BATCH", 100)
    failed = insert_jobs(queue, 250)
    insert_jobs(queue, 5, status=JobStatus.COMPLETED, target=lambda n: f"done-{n}")
    announced: list[int] = []

    def announce(events: Iterable[JobEvent]) -> None:
        announced.append(len(list(events)))

    monkeypatch.setattr(queue, "announce", announce)
    progress: list[int] = []

    result = monitor.retry_matching(JobFilter(FAILED), progress.append)

    assert sorted(job.id for job in result.changed) == sorted(failed)
    assert result.skipped == 0
    assert announced == [100, 100, 50]  # one transaction and one announcement per batch
    assert progress == [100, 200, 250]
    assert monitor.counts()[JobStatus.PENDING] == 250
    retried = queue.get(failed[0])
    assert (retried.status, retried.max_attempts, retried.finished_at) == (JobStatus.PENDING, 4, None)


def test_bulk_retry_queues_one_job_per_piece_of_work(queue: JobStore, monitor: JobMonitor) -> None:
    older, newer = insert_jobs(queue, 2, target=lambda _n: "same-scrap")
    (busy,) = insert_jobs(queue, 1, target=lambda _n: "busy-scrap")
    queue.enqueue(JobType.CARD_ANALYSIS, "busy-scrap")  # that work is queued already

    result = monitor.retry([older, newer, busy])

    assert [job.id for job in result.changed] == [newer]
    assert result.skipped == 2
    assert queue.get(older).status is JobStatus.FAILED
    assert queue.get(busy).status is JobStatus.FAILED


def test_bulk_cancel_cancels_waiting_jobs_and_announces_them(queue: JobStore, monitor: JobMonitor) -> None:
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    waiting = [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}").id for n in range(3)]
    (done,) = insert_jobs(queue, 1, status=JobStatus.COMPLETED, target=lambda _n: "done")
    events.clear()

    result = monitor.cancel([*waiting, done])

    assert sorted(job.id for job in result.changed) == sorted(waiting)
    assert result.skipped == 1
    assert {(e.old_status, e.new_status) for e in events} == {(JobStatus.PENDING, JobStatus.CANCELLED)}
    assert queue.get(done).status is JobStatus.COMPLETED


def test_failures_group_by_signature_and_a_group_is_retried_alone(queue: JobStore, monitor: JobMonitor) -> None:
    server = insert_jobs(
        queue,
        20,
        error=lambda n: f"TransientError: AI server at http://127.0.0.1:{5000 + n}/v1 answered 500 after {n}.5 s",
    )
    other = insert_jobs(
        queue,
        2,
        error=lambda n: f"TargetNotFoundError: scrap 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5{n} is gone",
        target=lambda n: f"gone-{n}",
    )

    groups = monitor.failure_groups()

    assert [group.count for group in groups] == [20, 2]
    assert groups[0].example.startswith("TransientError: AI server at http://127.0.0.1:")
    assert groups[0].job_types == (JobType.CARD_ANALYSIS,)
    result = monitor.retry_group(groups[0].signature)
    assert sorted(job.id for job in result.changed) == sorted(server)
    assert {queue.get(job_id).status for job_id in other} == {JobStatus.FAILED}
    assert [group.count for group in monitor.failure_groups()] == [2]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("ReadTimeout: timed out after 30 s", "ReadTimeout: timed out after 120.5 s"),
        (
            "HTTPStatusError: 502 for url 'https://api.example.com/v1/x?a=1'",
            "HTTPStatusError: 502 for url 'http://h/y'",
        ),
        (
            "JobNotFoundError: job 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "JobNotFoundError: job 0190ffff-c3d4-7e5f-8a9b-000000000000",
        ),
        ("OSError: cannot read /home/a/x.txt", "OSError: cannot read /tmp/b/y.md"),
    ],
)
def test_signatures_mask_what_varies(first: str, second: str) -> None:
    assert error_signature(first) == error_signature(second)


def test_signatures_keep_what_makes_failures_different() -> None:
    assert error_signature("ReadTimeout: timed out") != error_signature("ConnectError: refused")
    assert error_signature("PermanentError: the model answered no JSON") == "PermanentError: the model answered no JSON"
    assert error_signature(None) == "(no error text)"


def test_cancelling_waiting_jobs_leaves_one_that_started_meanwhile(
    queue: JobStore, monitor: JobMonitor, backend: Backend
) -> None:
    waiting = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    claim = queue.claim_next(
        backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS}
    )  # started after it was listed
    assert claim is not None

    result = monitor.cancel([waiting.id], statuses=(JobStatus.PENDING,))

    assert result.count == 0
    assert queue.get(waiting.id).status is JobStatus.PROCESSING


def test_a_signature_keeps_the_text_after_an_address() -> None:
    assert error_signature("HTTPStatusError: 500 from http://127.0.0.1:5000/v1/chat: The server had an error") == (
        "HTTPStatusError: 500 from <url>: The server had an error"
    )


def test_a_signature_keeps_the_http_status() -> None:
    """Issue 38, item 15: failure groups read "HTTP # from <url>"; a 500 and a 503 are not the same failure."""
    server_error = "HTTP 500 Internal Server Error from http://127.0.0.1:5000/v1/chat/completions: error 17"
    assert error_signature(server_error) == "HTTP 500 Internal Server Error from <url>: error #"
    assert error_signature("The page was not found (HTTP 404).") == "The page was not found (HTTP 404)."
    assert error_signature("GitHub answered 409 to the commit (try 2)") == "GitHub answered 409 to the commit (try #)"
    assert error_signature("HTTP 503 from http://a/b") != error_signature("HTTP 500 from http://a/b")
    assert error_signature("timed out after 30 s") == error_signature("timed out after 120 s")


def _failed_for_good(queue: JobStore, backend: Backend, job_type: JobType, target: str, kind: ErrorKind) -> str:
    job = queue.enqueue(job_type, target, max_attempts=1)
    claim = queue.claim_next(backend.require_session(), JOB_POOLS[job_type], {job_type})
    assert claim is not None
    assert claim.job.id == job.id
    failed = queue.fail(claim, TransientError("HTTP 500 Internal Server Error"), Classification(kind))
    assert failed is not None
    assert failed.status is JobStatus.FAILED
    return job.id


def test_failed_by_the_server_is_each_works_newest_transient_failure(
    queue: JobStore, monitor: JobMonitor, backend: Backend
) -> None:
    """What a change of AI settings runs again (issue 38, item 15): not a failure the settings cannot mend, not
    another pool's, not one a later job of its work took over from."""
    server = _failed_for_good(queue, backend, JobType.SCRAP_REFINE, "scrap-1", ErrorKind.TRANSIENT)
    _failed_for_good(queue, backend, JobType.CARD_ANALYSIS, "scrap-2", ErrorKind.PERMANENT)
    _failed_for_good(queue, backend, JobType.TIL_GITHUB_COMMIT, "commit-1", ErrorKind.TRANSIENT)
    _failed_for_good(queue, backend, JobType.CARD_ANALYSIS, "scrap-3", ErrorKind.TRANSIENT)
    queue.enqueue(JobType.CARD_ANALYSIS, "scrap-3")  # asked for again since (Analyse again)
    ai_work = [JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE]
    assert monitor.failed_by_the_server(ai_work) == [server]
    assert monitor.retry(monitor.failed_by_the_server(ai_work)).count == 1
    assert queue.get(server).status is JobStatus.PENDING
    assert monitor.failed_by_the_server(ai_work) == []
