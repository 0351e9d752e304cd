from __future__ import annotations

from PySide6.QtCore import QModelIndex
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.bootstrap import Backend
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.queue.records import JobEvent
from san_desktop.queue.store import JobStore
from san_desktop.ui.jobs.table_model import JobTableModel


def _fill(queue: JobStore, count: int) -> list[str]:
    return [queue.enqueue(JobType.CARD_ANALYSIS, f"scrap-{n}").id for n in range(count)]


def test_jobs_are_fetched_lazily_newest_first(qtbot: QtBot, queue: JobStore, app: SanApp) -> None:
    ids = _fill(queue, 250)
    model = JobTableModel(app, page_size=100)
    model.reload()
    assert model.rowCount() == 100
    assert model.canFetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert model.rowCount() == 250
    assert not model.canFetchMore(QModelIndex())
    shown = [model.job_at(row).id for row in range(250)]  # type: ignore[union-attr]
    assert shown == list(reversed(ids))


def test_events_update_rows_in_place_and_add_new_jobs_on_top(
    qtbot: QtBot, queue: JobStore, backend: Backend, app: SanApp
) -> None:
    _fill(queue, 5)
    model = JobTableModel(app, page_size=100)
    model.reload()
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    changed: list[int] = []
    model.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))

    claim = queue.claim_next(backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
    assert claim is not None
    new = queue.enqueue(JobType.SCRAP_REFINE, "scrap-new")
    for event in events:
        model.upsert(event.job)

    assert model.rowCount() == 6
    assert model.job_at(0).id == new.id  # type: ignore[union-attr]
    oldest_row = model.row_of(claim.job.id)
    assert oldest_row == 5
    assert model.job_at(oldest_row).status is JobStatus.PROCESSING  # type: ignore[union-attr]
    assert changed == [4]  # the claim changed row 4 before the new job pushed it to row 5


def test_empty_model_takes_a_first_job(qtbot: QtBot, queue: JobStore, app: SanApp) -> None:
    model = JobTableModel(app)
    model.reload()
    assert model.rowCount() == 0
    events: list[JobEvent] = []
    queue.add_listener(events.append)
    job = queue.enqueue(JobType.CARD_ANALYSIS, "scrap-1")
    model.upsert(events[0].job)
    assert model.rowCount() == 1
    assert model.job_at(0).id == job.id  # type: ignore[union-attr]


def test_every_job_type_has_a_label_in_the_monitor() -> None:
    from san_desktop.ui.jobs.table_model import JOB_TYPE_LABELS

    assert set(JOB_TYPE_LABELS) == set(JobType)


def test_new_jobs_are_shown_at_once_and_named_when_their_labels_are_read_in_the_background(
    qtbot: QtBot, app: SanApp
) -> None:
    """An import queues thousands of jobs: their labels were read one by one on the GUI thread."""
    deferred: list[tuple[object, object]] = []
    model = JobTableModel(app, background=lambda call, arrived, _failed: deferred.append((call, arrived)))
    model.reload()
    first_page = deferred.pop()
    first_page[1](first_page[0]())  # type: ignore[operator]
    captured = [app.capture_text(f"Note {n}: SQLite keeps one writer at a time.").value for n in range(3)]
    jobs = app.jobs.list_jobs(model.filter)  # as their events bring them
    model.upsert_many(jobs)
    assert model.rowCount() == 6  # analyses and refinements shown at once ...
    assert {model.target_label(job) for job in jobs} == {result.scrap_id for result in captured}  # ... by id
    [(read, arrived)] = deferred  # one read for all of them, off the GUI thread
    changed: list[int] = []
    model.dataChanged.connect(lambda top, bottom: changed.append(bottom.row() - top.row() + 1))
    arrived(read())  # type: ignore[operator]
    assert {model.target_label(job) for job in jobs} == {
        f"Note {n}: SQLite keeps one writer at a time." for n in range(3)
    }
    assert changed == [6]
