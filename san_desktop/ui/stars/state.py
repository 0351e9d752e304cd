"""What the Stars page shows, read in one background call (``load_stars``), and how it words it: whether a
GitHub token is set, the sync status, the latest run's recommendations, the newest sync and ranking jobs;
what is running now ("Fetching starred repositories… page 2", "Ranking against your cards…") or how the
last refresh failed, with a hint. No widgets here."""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from san_desktop.app import SanApp
from san_desktop.core.credentials import GITHUB_TOKEN, ways_to_set
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.core.redact import first_cause
from san_desktop.queue.monitor import JobFilter
from san_desktop.queue.records import JobRecord

if TYPE_CHECKING:  # numpy comes with the star service: it loads with the page's first read, after the first frame
    from san_desktop.services.stars import Recommendation, StarsStatus

SHOWN = 100  # recommendations read at once (a run keeps 200)
STAR_JOB_TYPES = (JobType.GITHUB_STAR_SYNC, JobType.GITHUB_STAR_RECOMMENDATION)
SETTINGS_LINK = "settings"  # the href of "Open Settings" in the page's texts

FETCHING = "Fetching starred repositories…"
RANKING = "Ranking against your cards…"
NO_TOKEN = "No GitHub token to see recommendations from your stars with"  # and how to give one, as it works here
NEVER_SYNCED = "Refresh to fetch your stars."


@dataclass(frozen=True)
class StarsSnapshot:
    """The page's data as one background call read it."""

    connected: bool  # a GitHub token is set (keyring or environment)
    token_ways: str  # how to give one (not connected): the ways that work on this machine
    status: StarsStatus
    recommendations: tuple[Recommendation, ...]
    language: str | None  # the filter they were read with
    sync_job: JobRecord | None  # the newest of its type
    rank_job: JobRecord | None


def load_stars(app: SanApp, language: str | None, limit: int = SHOWN) -> StarsSnapshot:
    """Runs off the GUI thread. The jobs are read before the recommendations: a ranking job read as
    completed has its run among them (it is stored in the transaction that completes it)."""
    connected = app.connections.github_token_source() != "none"
    ways = "" if connected else ways_to_set(GITHUB_TOKEN)
    newest = {
        job_type: next(iter(app.jobs.list_jobs(JobFilter(job_types=frozenset({job_type})), limit=1)), None)
        for job_type in STAR_JOB_TYPES
    }
    status = app.stars.status()
    recommendations = tuple(app.stars.latest(limit=limit, language=language))
    return StarsSnapshot(
        connected,
        ways,
        status,
        recommendations,
        language,
        newest[JobType.GITHUB_STAR_SYNC],
        newest[JobType.GITHUB_STAR_RECOMMENDATION],
    )


def newer(known: JobRecord | None, seen: JobRecord | None) -> JobRecord | None:
    """The newer of two states of the newest job of a type: a later job (ids sort by creation), or a
    later change of the same job; a load that read the database before an event keeps the event's."""
    if known is None or seen is None:
        return seen or known
    if seen.id != known.id:
        return seen if seen.id > known.id else known
    return seen if seen.updated_at >= known.updated_at else known


@dataclass(frozen=True)
class Activity:
    busy: bool  # a sync or a ranking will still run: Refresh waits
    text: str  # what runs (or waits) now; "" when idle
    error: str  # rich text: how the last refresh failed, with a hint; "" when it did not


IDLE = Activity(False, "", "")


def readable_error(job: JobRecord) -> str:
    """The job's error as the sentence it is, without the name of the exception that carried it (nor its
    causes: the Jobs page lists them)."""
    return first_cause(job.error_message)


def _waiting(job: JobRecord, now: datetime, what: str) -> str | None:
    """A retry waiting for its time (a rate limit, a network error): when it runs, and why."""
    if job.status is JobStatus.PENDING and job.run_after is not None and job.run_after > now:
        at = job.run_after.astimezone().strftime("%H:%M")
        error = readable_error(job)
        if "rate limit" in error.casefold():
            return f"GitHub's rate limit is used up: waiting until {at} to {what}"
        reason = f" ({error})" if error else ""
        return f"Waiting until {at} to {what}{reason}"
    return None


def activity(
    sync: JobRecord | None, rank: JobRecord | None, fetched_pages: int | None, now: datetime | None = None
) -> Activity:
    """What the newest sync and ranking jobs say: the sync's page while it runs (``fetched_pages``, from
    its progress), then the ranking; else the failure of whichever of them ran last."""
    now = now or datetime.now(UTC)
    if sync is not None and sync.status in ACTIVE_JOB_STATUSES:
        waiting = _waiting(sync, now, "fetch your stars again")
        if waiting:
            return Activity(True, waiting, "")
        page = f" page {fetched_pages}" if fetched_pages else ""
        return Activity(True, FETCHING + page, "")
    if rank is not None and rank.status in ACTIVE_JOB_STATUSES:
        return Activity(True, _waiting(rank, now, "rank your stars again") or RANKING, "")
    last = max((job for job in (sync, rank) if job is not None), key=lambda job: job.id, default=None)
    if last is None or last.status is not JobStatus.FAILED:
        return IDLE
    return Activity(False, "", failure_text(last))


def failure_text(job: JobRecord) -> str:
    """Rich text: what failed, its error, and what to do about it."""
    error = html.escape(readable_error(job) or "no error was recorded")
    settings = f"<a href='{SETTINGS_LINK}'>Open Settings</a>"
    if job.job_type is JobType.GITHUB_STAR_SYNC:
        if "token" in error.casefold():
            hint = f"Set a valid GitHub token ({settings}), then Refresh."
        else:
            hint = f"Check your network and the GitHub API address ({settings}), then Refresh."
        return f"<b>Could not fetch your stars:</b> {error}<br>{hint} The Jobs page lists every attempt."
    hint = f"Ranking uses the AI provider that makes your cards: check it ({settings}), then Refresh."
    return f"<b>Could not rank your stars:</b> {error}<br>{hint} The Jobs page lists every attempt."


def summary_text(status: StarsStatus, sync: JobRecord | None = None) -> str:
    """The last sync (local time) and how many repositories are starred. A sync whose first page had not
    changed (304) leaves ``status.last_sync`` as it was: the newest completed sync job says when it ran."""
    synced = status.last_sync
    if sync is not None and sync.status is JobStatus.COMPLETED and sync.finished_at is not None:
        synced = max(synced, sync.finished_at) if synced is not None else sync.finished_at
    if synced is None:
        return "Not synced yet."
    count = status.repositories
    starred = f"{count:,} starred repositor{'ies' if count != 1 else 'y'}"
    return f"{starred} · last synced {synced.astimezone().strftime('%Y-%m-%d %H:%M')}"


def empty_text(snapshot: StarsSnapshot) -> str:
    """Why the list is empty (it is)."""
    if not snapshot.connected:
        return f"{NO_TOKEN}: {snapshot.token_ways}."
    if snapshot.language is not None:
        return f"No recommendation in {snapshot.language}: choose another language."
    status = snapshot.status
    if status.last_sync is None and status.repositories == 0:
        return NEVER_SYNCED
    if status.repositories == 0:
        return "You have not starred any repository on GitHub yet: star some, then Refresh."
    return (
        f"Nothing to recommend yet: your {status.repositories:,} starred repositories are ranked against your "
        "cards. Scrap what you are learning (cards are made from it), then Refresh."
    )


def compact_count(count: int) -> str:
    """Stars as GitHub shows them: 987, 1.2k, 45k, 1.3M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        value, unit = count / 1000, "k"
    else:
        value, unit = count / 1_000_000, "M"
    return f"{value:.1f}{unit}".replace(".0", "") if value < 10 else f"{value:.0f}{unit}"
