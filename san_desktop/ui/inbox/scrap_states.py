"""What a scrap is and what its jobs are really doing, in the Inbox's words (plain functions, no widgets)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from san_desktop.core.enums import JOB_STATUS_NAMES, JobStatus, SourceType
from san_desktop.core.redact import first_cause
from san_desktop.services.scrap_info import ScrapInfo


def retryable(status: JobStatus | None) -> bool:
    return status in (JobStatus.FAILED, JobStatus.CANCELLED)


def job_state_text(
    status: JobStatus | None,
    run_after: datetime | None,
    *,
    running: str,
    paused: bool,
    waiting: str = "Waiting…",
    now: datetime | None = None,
) -> str:
    """What a scrap's job is really doing: waiting, paused, running, failed (with why), cancelled."""
    if status is JobStatus.PENDING:
        if paused:
            return "Paused (the AI server is failing; see Jobs)"
        if run_after is not None and run_after > (now or datetime.now(UTC)):
            return f"Waiting to retry at {run_after.astimezone().strftime('%H:%M:%S')}"
        return waiting
    if status is JobStatus.PROCESSING:
        return running
    if status in (JobStatus.CANCELLED, JobStatus.FAILED):
        return JOB_STATUS_NAMES[status]
    return ""


def scrap_label(info: ScrapInfo) -> str:
    """What the Scrap column names: a web link's page title (its address until it has one), else the text."""
    if info.source_type is SourceType.URL and (info.title or info.fetch_status is not None):
        return info.title or info.source_ref or info.content
    return _HEADING_MARK.sub("", info.content)


_HEADING_MARK = re.compile(r"(?m)^#{1,6}\s+")  # "## Flexbox centering": the heading, without its marks


def fetch_failed(info: ScrapInfo) -> bool:
    """A link whose page never came (its fetch failed or was cancelled): fetch again, or card the address."""
    return info.awaiting_page and retryable(info.fetch_status)


def shows_page_state(info: ScrapInfo) -> bool:
    """The Card column tells about the page: a link waiting for it, with no card and no analysis asked yet."""
    return (
        info.awaiting_page
        and info.fetch_status not in (None, JobStatus.COMPLETED)
        and info.analysis_status is None
        and not info.card_title
    )


def page_text(info: ScrapInfo) -> str:
    """Where a link's page is (see ``shows_page_state``)."""
    if info.fetch_status is JobStatus.FAILED:
        return f"Page not fetched: {first_cause(info.fetch_error)}"
    if info.fetch_status is JobStatus.CANCELLED:
        return "Page fetch cancelled"
    # the network pool has no breaker: "paused" (the AI server) never applies to a download
    return job_state_text(
        info.fetch_status,
        info.fetch_run_after,
        running="Fetching the page…",
        waiting="Waiting to fetch the page…",
        paused=False,
    )


def analysis_text(info: ScrapInfo, paused: bool = False) -> str:
    if info.card_title and info.analysis_status not in (JobStatus.PENDING, JobStatus.PROCESSING):
        return info.card_title
    if info.analysis_status is None:
        return "Not analysed"
    if info.analysis_status is JobStatus.FAILED:
        return f"Analysis failed: {first_cause(info.analysis_error)}"
    if info.analysis_status is JobStatus.COMPLETED:
        return info.card_title or "Analysed"
    state = job_state_text(info.analysis_status, info.analysis_run_after, running="Analysing…", paused=paused)
    return f"{info.card_title} — {state}" if info.card_title else state


def card_text(info: ScrapInfo, paused: bool = False) -> str:
    """The Card column: the page's state for a link still waiting for it, else the analysis's."""
    return page_text(info) if shows_page_state(info) else analysis_text(info, paused)


def card_failed(info: ScrapInfo) -> bool:
    """The Card column tells of a failure (shown in the failure colour)."""
    if shows_page_state(info):
        return info.fetch_status is JobStatus.FAILED
    return info.analysis_status is JobStatus.FAILED


def card_error(info: ScrapInfo) -> str | None:
    """The full reason behind the Card column (its tooltip), when there is one."""
    return info.fetch_error if shows_page_state(info) else info.analysis_error


def refine_text(info: ScrapInfo, paused: bool = False) -> str:
    """The Cleaned-up text column: the refinement's state, and whether it made a cleaner copy."""
    if info.refine_status is JobStatus.FAILED:
        return f"Failed: {first_cause(info.refine_error)}"
    if info.refine_status in (JobStatus.PENDING, JobStatus.PROCESSING, JobStatus.CANCELLED):
        return job_state_text(info.refine_status, info.refine_run_after, running="Cleaning up…", paused=paused)
    if info.refined:
        return "Ready"
    return "Not needed" if info.refine_status is JobStatus.COMPLETED else "—"
