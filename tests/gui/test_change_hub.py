"""One way into the change hub, one way out: the notifications and the Stars page's activity hear of jobs through
the hub (``ChangeHub.tell``), as the pages do, never straight from the runner."""

from __future__ import annotations

from datetime import UTC, datetime

from pytestqt.qtbot import QtBot

from san_desktop.app import Changes
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.ids import new_id
from san_desktop.queue.records import JobEvent, JobRecord
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.stars.activity import StarsActivity


def _job(job_type: JobType, status: JobStatus) -> JobRecord:
    now = datetime.now(UTC)
    return JobRecord(
        id=new_id(),
        job_type=job_type,
        target_id=new_id(),
        status=status,
        attempts=1,
        max_attempts=3,
        error_message=None,
        error_kind=None,
        payload=None,
        run_after=None,
        owner_session=None,
        lease_until=None,
        created_at=now,
        updated_at=now,
        started_at=now,
        finished_at=now if status is JobStatus.COMPLETED else None,
    )


def test_notifications_hear_of_finished_work_through_the_hub_only(qtbot: QtBot, context: AppContext) -> None:
    main = MainWindow(context)
    qtbot.addWidget(main)
    done = JobEvent(_job(JobType.TIL_GENERATION, JobStatus.COMPLETED), JobStatus.PROCESSING)
    context.hub.unfollow(context.runner)
    context.runner.job_changed.emit(done)  # the runner's news the hub does not pass on: nobody hears it
    assert not main.notifier.pending
    context.hub.tell(Changes.of_event(done), background=True)
    qtbot.waitUntil(lambda: main.notifier.pending, timeout=5_000)
    main.notifier.flush()
    assert "TIL ready" in main.notice_label.text()


def test_a_job_finished_again_is_no_news_to_the_notifications(qtbot: QtBot, context: AppContext) -> None:
    main = MainWindow(context)
    qtbot.addWidget(main)
    again = JobEvent(_job(JobType.TIL_GENERATION, JobStatus.COMPLETED), JobStatus.COMPLETED)
    with qtbot.waitSignal(context.hub.changed, timeout=5_000):
        context.hub.tell(Changes.of_event(again), background=True)
    assert not main.notifier.pending


def test_the_stars_activity_hears_of_its_jobs_through_the_hub_only(qtbot: QtBot, context: AppContext) -> None:
    activity = StarsActivity(context.runner, context.hub)
    qtbot.addWidget(activity)
    started = JobEvent(_job(JobType.GITHUB_STAR_SYNC, JobStatus.PROCESSING), JobStatus.PENDING)
    context.hub.unfollow(context.runner)
    context.runner.job_changed.emit(started)
    assert not activity.busy
    with qtbot.waitSignal(activity.busy_changed, timeout=5_000) as busy:
        context.hub.tell(Changes.of_event(started), background=True)
    assert busy.args == [True]
    assert "Fetching" in activity.text.text()


def test_the_runners_events_reach_them_by_the_hub(qtbot: QtBot, context: AppContext) -> None:
    activity = StarsActivity(context.runner, context.hub)
    qtbot.addWidget(activity)
    started = JobEvent(_job(JobType.GITHUB_STAR_SYNC, JobStatus.PROCESSING), JobStatus.PENDING)
    with qtbot.waitSignal(activity.busy_changed, timeout=5_000):
        context.runner.job_changed.emit(started)  # (the hub follows the runner: ``build_context``)
    assert activity.busy
