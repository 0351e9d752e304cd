"""``san jobs ...``: run, list, show, retry, cancel, failures, pause, resume, sweep."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from san_desktop.cli.common import (
    add_list_options,
    open_library,
    print_json,
    print_rows,
    rows_wanted,
    seconds,
    short_time,
)
from san_desktop.core.enums import JOB_POOLS, JOB_STATUS_NAMES, POOL_NAMES, JobPool, JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.redact import first_cause, readable, readable_parts, redact, traceback_cause

# What needs SQLAlchemy (the facade, the queue's monitor) is imported by the commands that use it: building
# the parser must not load the database layer (`san scrap add` pays for every module the parser imports).
if TYPE_CHECKING:
    from san_desktop.app import SanApp
    from san_desktop.jobs.runner import PoolStatus
    from san_desktop.queue.records import BulkResult, JobRecord
    from san_desktop.queue.store import JobStore


MAX_TIMEOUT = 30 * 86_400.0
SIGNATURE_WIDTH = 80  # characters of a failure group's signature in the table (--json has all of it)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    jobs = commands.add_parser("jobs", help="background jobs")
    sub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)

    run = sub.add_parser("run", help="run jobs without a window (takes the data directory's lock)")
    run.add_argument(
        "--until-idle",
        action="store_true",
        help="exit when nothing is runnable now (exit code 75 when failures or a rejected key paused the AI pool)",
    )
    run.add_argument(
        "--wait-retries",
        action="store_true",
        help="with --until-idle: also wait for retries and rate limits that are due later",
    )
    run.add_argument("--timeout", type=seconds(MAX_TIMEOUT), metavar="S", help="exit after S seconds")
    run.add_argument(
        "--give-up-after",
        type=seconds(MAX_TIMEOUT),
        metavar="S",
        help="a library on a server that cannot be reached is waited for, S seconds at most (default 300); then "
        "the run stops with exit code 69",
    )
    run.add_argument(
        "-v", "--verbose", action="store_true", help="print the log's INFO lines too (each job's progress)"
    )
    run.set_defaults(handler=cmd_run)

    listing = sub.add_parser("list", help="list jobs, newest first")
    listing.add_argument(
        "--status",
        type=_status,
        action="append",
        default=[],
        metavar="S",
        help="waiting, running, completed, failed or cancelled (repeat for several)",
    )
    listing.add_argument("--type", type=_job_type, action="append", default=[], metavar="T", dest="types")
    add_list_options(listing)
    listing.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="one job with its attempts")
    show.add_argument("job_id", metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)

    retry = sub.add_parser(
        "retry",
        help="run failed or cancelled jobs again: by id, or every failed job matching --failed",
        description="Run jobs again, each with one fresh attempt: the jobs named by id (failed or cancelled "
        "ones), or with --failed every failed job of the given types whose error contains the given text.",
    )
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("job_ids", nargs="*", default=[], metavar="ID")
    which.add_argument("--failed", action="store_true", help="every failed job (narrowed by --type, --error-contains)")
    _add_types(retry, "with --failed: jobs of this type only (repeat for several)")
    retry.add_argument("--error-contains", default="", metavar="S", help="with --failed: jobs whose error has S")
    retry.set_defaults(handler=cmd_retry, usage_error=retry.error)

    cancel = sub.add_parser(
        "cancel",
        help="cancel jobs: by id (waiting or running), or every waiting job with --waiting",
        description="Cancel the jobs named by id (a running one is asked to stop), or with --waiting every job "
        "that waits to run (running ones go on), narrowed by --type.",
    )
    which = cancel.add_mutually_exclusive_group(required=True)
    which.add_argument("job_ids", nargs="*", default=[], metavar="ID")
    which.add_argument("--waiting", action="store_true", help="every waiting job (narrowed by --type)")
    _add_types(cancel, "with --waiting: jobs of this type only (repeat for several)")
    cancel.set_defaults(handler=cmd_cancel, usage_error=cancel.error)

    failures = sub.add_parser("failures", help="failed jobs grouped by their error, the largest group first")
    _add_types(failures, "failures of jobs of this type only (repeat for several)")
    add_list_options(failures)
    failures.set_defaults(handler=cmd_failures)

    for action, verb in (("pause", "start no new jobs of"), ("resume", "run jobs again in")):
        pool = sub.add_parser(action, help=f"{verb} a pool (remembered in the settings)")
        pool.add_argument("pool", type=_pool, metavar="POOL", help="ai or github")
        pool.set_defaults(handler=cmd_pause, paused=action == "pause")

    sweep_parser = sub.add_parser("sweep", help="run the recovery sweep now (takes the lock)")
    sweep_parser.add_argument("--json", action="store_true")
    sweep_parser.set_defaults(handler=cmd_sweep)


def _status(value: str) -> JobStatus:
    """A status by the word the window and the lists show (waiting, running...) or by its stored name."""
    named = {word.lower(): status for status, word in JOB_STATUS_NAMES.items()}
    found = named.get(value.strip().lower()) or next((s for s in JobStatus if s.value == value.strip().upper()), None)
    if found is None:
        raise argparse.ArgumentTypeError(f"unknown status {value!r}; one of: {', '.join(named)}")
    return found


def _job_type(value: str) -> JobType:
    try:
        return JobType(value.upper())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown job type {value!r}; one of: {', '.join(t.value for t in JobType)}"
        ) from None


def _pool(value: str) -> JobPool:
    try:
        return JobPool(value.upper())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown pool {value!r}; one of: {', '.join(p.value.lower() for p in JobPool)}"
        ) from None


def _add_types(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument(
        "--type", type=_job_type, action="append", default=[], metavar="T", dest="types", help=help_text
    )


def cmd_run(args: argparse.Namespace) -> int:
    from san_desktop.jobs.headless import GIVE_UP_SECONDS, POOL_PAUSED, run_headless  # (Qt loads only here)
    from san_desktop.jobs.processors import registry_for

    with open_library(args, kind="headless", lock=True, log_to_stderr=True, verbose=args.verbose) as app:
        outcome = run_headless(
            app.backend,
            registry_for(app),
            app.settings.jobs,
            until_idle=args.until_idle,
            wait_retries=args.wait_retries,
            timeout=args.timeout,
            ai_threads=app.settings.ai_threads,
            queue=app.queue,
            give_up=args.give_up_after or GIVE_UP_SECONDS,
        )
        if outcome.reason and outcome.code != POOL_PAUSED and not args.verbose:  # (the log said it; a pause: below)
            print(outcome.reason, file=sys.stderr)
        if args.until_idle and outcome.code in (0, POOL_PAUSED):
            paused = [pool for pool in JobPool if app.settings.jobs.paused(pool)]
            _tell_about_waiting_jobs(app.queue, [t for t in JobType if JOB_POOLS[t] not in paused])
            _tell_about_paused_pools(app, paused)
            for status in outcome.paused:
                _tell_about_a_pool_paused_by_the_breaker(app, status)
        return outcome.code


def _tell_about_waiting_jobs(queue: JobStore, job_types: list[JobType]) -> None:
    """``--until-idle`` stops when nothing can run now; jobs waiting for a retry are said, not hidden."""
    waiting = queue.waiting_summary(job_types)
    if waiting is not None:
        count_, next_run = waiting
        delay = max(0.0, (next_run - queue.clock()).total_seconds())
        print(
            f"{count_} job(s) wait for a retry or a rate limit, the next in {delay:.0f} s; run again later "
            "or add --wait-retries.",
            file=sys.stderr,
        )


def _tell_about_paused_pools(app: SanApp, pools: list[JobPool]) -> None:
    """Nor are the jobs that wait in a pool the user paused (they do not keep ``--until-idle`` going)."""
    from san_desktop.queue.monitor import JobFilter

    for pool in pools:
        types = frozenset(job_type for job_type in JobType if JOB_POOLS[job_type] is pool)
        waiting = app.jobs.counts(JobFilter(job_types=types))[JobStatus.PENDING]
        if waiting:
            print(
                f"{waiting} {POOL_NAMES[pool]} job(s) wait while the {POOL_NAMES[pool]} pool is paused; "
                f"`san jobs resume {pool.value.lower()}` lets them run.",
                file=sys.stderr,
            )


def _tell_about_a_pool_paused_by_the_breaker(app: SanApp, status: PoolStatus) -> None:
    """``--until-idle`` stopped while failures, or a key the server rejected, paused a pool (exit code 75)."""
    from san_desktop.queue.monitor import JobFilter

    name = POOL_NAMES[status.pool]
    types = frozenset(job_type for job_type in JobType if JOB_POOLS[job_type] is status.pool)
    waiting = app.jobs.counts(JobFilter(job_types=types))[JobStatus.PENDING]
    if status.reason is not None:  # only the user can fix it
        why = f"paused. {status.reason}; then run `san jobs run` again."
    else:
        last = f" (the last: {redact(status.last_error)})" if status.last_error else ""
        why = (
            f"paused after {status.failures} failures in a row{last}; run `san jobs run` again later, or see "
            "`san jobs failures`."
        )
    print(f"{waiting} {name} job(s) wait: the {name} pool is {why}", file=sys.stderr)


def cmd_list(args: argparse.Namespace) -> int:
    from san_desktop.queue.monitor import JobFilter

    where = JobFilter(frozenset(args.status), frozenset(args.types))
    with open_library(args) as app:
        counts = app.jobs.counts(where)
        total = sum(n for status, n in counts.items() if not where.statuses or status in where.statuses)
        jobs = app.jobs.list_jobs(where, limit=max(1, rows_wanted(args) or total))
    print_rows(
        jobs,
        args,
        headers=["ID", "TYPE", "STATUS", "ATTEMPTS", "UPDATED", "TARGET", "ERROR"],
        cells=lambda job: [
            job.id,
            job.job_type.value,
            JOB_STATUS_NAMES[job.status],
            f"{job.attempts}/{job.max_attempts}",
            short_time(job.updated_at),
            job.target_id,
            first_cause(job.error_message)[:60],
        ],
        empty="No jobs.",
        noun="job",
        total=total,
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        job = app.queue.get(args.job_id)
        attempts = app.queue.attempts(args.job_id)
    if args.json:
        print_json({"job": job, "attempts": attempts})
        return 0
    for label, value in (
        ("Job", job.id),
        ("Type", job.job_type.value),
        ("Target", job.target_id),
        ("Status", f"{JOB_STATUS_NAMES[job.status]} ({job.status.value})"),
        ("Attempts", f"{job.attempts} of {job.max_attempts}"),
        ("Created", short_time(job.created_at)),
        ("Updated", short_time(job.updated_at)),
        ("Runs after", short_time(job.run_after)),
        ("Error", first_cause(job.error_message) or "-"),
        *(("Because", cause) for cause in readable_parts(job.error_message)[1:]),
        ("Error kind", job.error_kind.value if job.error_kind else "-"),
    ):
        print(f"{label + ':':<12}{value}")
    if attempts:
        print("\nAttempts:")
        for attempt in attempts:
            outcome = attempt.outcome.value if attempt.outcome else "RUNNING"
            print(f"  #{attempt.attempt} {short_time(attempt.started_at)} {outcome} (run {attempt.run_id})")
            if attempt.error_text:
                print("    " + traceback_cause(attempt.error_text))
    return 0


def cmd_retry(args: argparse.Namespace) -> int:
    from san_desktop.queue.monitor import JobFilter

    if not args.failed:
        if args.types or args.error_contains:
            args.usage_error("--type and --error-contains go with --failed, not with job ids")
        return _each_job(args, "retried", lambda app, job_id: app.retry_job(job_id).value, _retried)
    where = JobFilter(
        statuses=frozenset({JobStatus.FAILED}),
        job_types=frozenset(args.types),
        error_contains=args.error_contains,
    )
    with open_library(args) as app:
        result = app.jobs.retry_matching(where)
    return _said(result, "No failed jobs match.", "job(s) queued again", "another run of the same work is queued")


def _retried(job: JobRecord) -> str:
    return f"Job {job.id} queued again ({job.attempts} of {job.max_attempts} attempts used)."


def cmd_cancel(args: argparse.Namespace) -> int:
    from san_desktop.queue.monitor import JobFilter

    if not args.waiting:
        if args.types:
            args.usage_error("--type goes with --waiting, not with job ids")
        return _each_job(args, "cancelled", lambda app, job_id: app.cancel_job(job_id).value, _cancelled)
    where = JobFilter(statuses=frozenset({JobStatus.PENDING}), job_types=frozenset(args.types))
    with open_library(args) as app:
        result = app.jobs.cancel_matching(where)
    return _said(result, "No waiting jobs match.", "waiting job(s) cancelled", "no longer waiting")


def _said(result: BulkResult, nothing: str, done: str, why_skipped: str) -> int:
    """What a bulk action did, in a line or two."""
    if not result.count and not result.skipped:
        print(nothing)
        return 0
    print(f"{result.count} {done}.")
    if result.skipped:
        print(f"{result.skipped} skipped ({why_skipped}).")
    return 0


def _cancelled(job: JobRecord) -> str:
    return f"Job {job.id} cancelled."


def _each_job(
    args: argparse.Namespace,
    done_as: str,
    change: Callable[[SanApp, str], JobRecord],
    done: Callable[[JobRecord], str],
) -> int:
    """``change`` each job by id, one at a time: one that cannot be changed (no such job, not in a state
    the action applies to) is said on stderr and the others are still changed. Exit code: 0 when all
    were changed; when none was and all for the same reason, that reason's (5: no such job); 1 otherwise."""
    job_ids = list(dict.fromkeys(args.job_ids))
    codes: list[int] = []
    with open_library(args) as app:
        for job_id in job_ids:
            try:
                job = change(app, job_id)
            except SanError as exc:
                message = redact(str(exc))
                print(f"san: {message}" if job_id in message else f"san: job {job_id}: {message}", file=sys.stderr)
                codes.append(exc.exit_code)
            else:
                print(done(job))
    if not codes:
        return 0
    if len(job_ids) > 1:
        print(f"san: {len(codes)} of {len(job_ids)} jobs could not be {done_as}.", file=sys.stderr)
    return codes[0] if len(codes) == len(job_ids) and len(set(codes)) == 1 else 1


def cmd_failures(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        groups = app.jobs.failure_groups(args.types)  # (grouped after masking: all of them, then cut)
    print_rows(
        groups,
        args,
        headers=["COUNT", "TYPES", "FIRST SEEN", "LAST SEEN", "SIGNATURE"],
        cells=lambda group: [
            str(group.count),
            ", ".join(job_type.value for job_type in group.job_types),
            short_time(group.first_seen),
            short_time(group.last_seen),
            _cut(readable(group.signature), SIGNATURE_WIDTH),
        ],
        empty="No failed jobs.",
        noun="group of failures",
        plural="groups of failures",
        total=len(groups),
    )
    return 0


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def cmd_pause(args: argparse.Namespace) -> int:
    """``san jobs pause|resume POOL``: a setting, which an open window takes up at once (a ``san jobs run``
    already running keeps the settings it started with)."""
    pool: JobPool = args.pool
    name = POOL_NAMES[pool]
    with open_library(args) as app:
        already = app.settings.jobs.paused(pool) == args.paused
        if not already:
            app.set_pool_paused(pool, args.paused)
    if already:
        print(f"{name} pool was {'paused' if args.paused else 'running'} already.")
        return 0
    if args.paused:
        print(
            f"{name} pool paused: no new {name} jobs start until `san jobs resume {pool.value.lower()}`; "
            "jobs running now finish."
        )
    else:
        print(f"{name} pool resumed: its waiting jobs run again.")
    print(
        "An open window follows at once; a `san jobs run` already running keeps its settings until it is started again."
    )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from san_desktop.jobs.processors import registry_for
    from san_desktop.services.recovery.sweep import sweep

    with open_library(args, lock=True) as app:
        hooks = registry_for(app).sweep_hooks
        report = sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks)
    if args.json:
        print_json(report)
    else:
        print(f"Recovery sweep: {report.summary()}.")
    return 0
