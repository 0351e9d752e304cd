"""``san jobs ...``: run, list, show, retry, cancel, sweep."""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from san_desktop.cli.common import count, print_json, print_table, seconds, short_time
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.queue.monitor import JobFilter

if TYPE_CHECKING:
    from san_desktop.app import SanApp
    from san_desktop.queue.job_queue import JobQueue


MAX_TIMEOUT = 30 * 86_400.0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    jobs = commands.add_parser("jobs", help="background jobs")
    sub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)

    run = sub.add_parser("run", help="run jobs without a window (takes the data directory's lock)")
    run.add_argument("--until-idle", action="store_true", help="exit when nothing is runnable now")
    run.add_argument(
        "--wait-retries",
        action="store_true",
        help="with --until-idle: also wait for retries and rate limits that are due later",
    )
    run.add_argument("--timeout", type=seconds(MAX_TIMEOUT), metavar="S", help="exit after S seconds")
    run.set_defaults(handler=cmd_run)

    listing = sub.add_parser("list", help="list jobs, newest first")
    listing.add_argument("--status", type=_status, action="append", default=[], metavar="S")
    listing.add_argument("--type", type=_job_type, action="append", default=[], metavar="T", dest="types")
    listing.add_argument("--limit", type=count(100_000), default=50)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="one job with its attempts")
    show.add_argument("job_id", metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)

    retry = sub.add_parser("retry", help="run a failed or cancelled job again")
    retry.add_argument("job_id", metavar="ID")
    retry.set_defaults(handler=cmd_retry)

    cancel = sub.add_parser("cancel", help="cancel a waiting or running job")
    cancel.add_argument("job_id", metavar="ID")
    cancel.set_defaults(handler=cmd_cancel)

    sweep_parser = sub.add_parser("sweep", help="run the recovery sweep now (takes the lock)")
    sweep_parser.add_argument("--json", action="store_true")
    sweep_parser.set_defaults(handler=cmd_sweep)


def _status(value: str) -> JobStatus:
    try:
        return JobStatus(value.upper())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown status {value!r}; one of: {', '.join(s.value for s in JobStatus)}"
        ) from None


def _job_type(value: str) -> JobType:
    try:
        return JobType(value.upper())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown job type {value!r}; one of: {', '.join(t.value for t in JobType)}"
        ) from None


def _queue(args: argparse.Namespace) -> AbstractContextManager[SanApp]:
    from san_desktop.app import open_app

    return open_app(args.data_dir, kind="cli", lock=False, log_to_stderr=False)


def cmd_run(args: argparse.Namespace) -> int:
    from san_desktop.app import open_app
    from san_desktop.jobs.headless import run_headless  # Qt is loaded only by the commands that need it
    from san_desktop.jobs.processors import registry_for

    with open_app(args.data_dir, kind="headless") as app:
        code = run_headless(
            app.backend,
            registry_for(app),
            app.settings.jobs,
            until_idle=args.until_idle,
            wait_retries=args.wait_retries,
            timeout=args.timeout,
            ai_threads=app.settings.ai_threads,
        )
        if args.until_idle and code == 0:
            _tell_about_waiting_jobs(app.queue)
        return code


def _tell_about_waiting_jobs(queue: JobQueue) -> None:
    """``--until-idle`` stops when nothing can run now; jobs waiting for a retry are said, not hidden."""
    waiting = queue.waiting_summary(list(JobType))
    if waiting is not None:
        count_, next_run = waiting
        delay = max(0.0, (next_run - queue.clock()).total_seconds())
        print(
            f"{count_} job(s) wait for a retry or a rate limit, the next in {delay:.0f} s; run again later "
            "or add --wait-retries.",
            file=sys.stderr,
        )


def cmd_list(args: argparse.Namespace) -> int:
    with _queue(args) as app:
        jobs = app.jobs.list_jobs(JobFilter(frozenset(args.status), frozenset(args.types)), limit=args.limit)
    if args.json:
        print_json(jobs)
        return 0
    if not jobs:
        print("No jobs.")
        return 0
    print_table(
        ["ID", "TYPE", "STATUS", "ATTEMPTS", "UPDATED", "TARGET", "ERROR"],
        [
            [
                job.id,
                job.job_type.value,
                job.status.value,
                f"{job.attempts}/{job.max_attempts}",
                short_time(job.updated_at),
                job.target_id,
                (job.error_message or "")[:60],
            ]
            for job in jobs
        ],
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _queue(args) as app:
        job = app.queue.get(args.job_id)
        attempts = app.queue.attempts(args.job_id)
    if args.json:
        print_json({"job": job, "attempts": attempts})
        return 0
    for label, value in (
        ("Job", job.id),
        ("Type", job.job_type.value),
        ("Target", job.target_id),
        ("Status", job.status.value),
        ("Attempts", f"{job.attempts} of {job.max_attempts}"),
        ("Created", short_time(job.created_at)),
        ("Updated", short_time(job.updated_at)),
        ("Runs after", short_time(job.run_after)),
        ("Error", job.error_message or "-"),
        ("Error kind", job.error_kind.value if job.error_kind else "-"),
    ):
        print(f"{label + ':':<12}{value}")
    if attempts:
        print("\nAttempts:")
        for attempt in attempts:
            outcome = attempt.outcome.value if attempt.outcome else "RUNNING"
            print(f"  #{attempt.attempt} {short_time(attempt.started_at)} {outcome} (run {attempt.run_id})")
            if attempt.error_text:
                print("    " + attempt.error_text.strip().splitlines()[-1])
    return 0


def cmd_retry(args: argparse.Namespace) -> int:
    with _queue(args) as app:
        job = app.retry_job(args.job_id).value
    print(f"Job {job.id} queued again ({job.attempts} of {job.max_attempts} attempts used).")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    with _queue(args) as app:
        job = app.cancel_job(args.job_id).value
    print(f"Job {job.id} cancelled.")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from san_desktop.app import open_app
    from san_desktop.jobs.processors import registry_for
    from san_desktop.jobs.recovery import sweep

    with open_app(args.data_dir, kind="cli", log_to_stderr=False) as app:
        hooks = registry_for(app).sweep_hooks
        report = sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks)
    if args.json:
        print_json(report)
    else:
        print(f"Recovery sweep: {report.summary()}.")
    return 0
