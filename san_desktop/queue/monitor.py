"""What the job monitor asks of the queue: filtered lists with live counts, bulk retry and cancel (one
transaction per batch, never one per row), and failures grouped by their error signature.

Bulk changes are announced to the queue's listeners like every other change, batch by batch, after each
batch committed: the runner starts re-queued jobs as they come, and a window stays live.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import aliased

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, ErrorKind, JobStatus, JobType
from san_desktop.db.models import AsyncJob, KnowledgeCard
from san_desktop.queue.records import BulkResult, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.queue.transitions import RETRYABLE_STATUSES

SIGNATURE_LIMIT = 300


@dataclass(frozen=True)
class JobFilter:
    """Which jobs a list, a count or a bulk action is about; empty parts match everything."""

    statuses: frozenset[JobStatus] = frozenset()
    job_types: frozenset[JobType] = frozenset()
    text: str = ""  # in the error, the job or target id, or the title of the target's card
    error_contains: str = ""  # in the error alone
    ids: frozenset[str] = frozenset()  # these jobs only (the ones a recovery sweep resumed)

    def with_statuses(self, *statuses: JobStatus) -> JobFilter:
        return replace(self, statuses=frozenset(statuses))

    @property
    def is_empty(self) -> bool:
        return self == JobFilter()

    def matches(self, job: JobRecord, title: str = "") -> bool:
        """What ``conditions`` select, for one job in hand (a live update): ``title`` is its target's
        card title when known."""
        if self.statuses and job.status not in self.statuses:
            return False
        if self.job_types and job.job_type not in self.job_types:
            return False
        if self.ids and job.id not in self.ids:
            return False
        error = (job.error_message or "").casefold()
        if (wanted := self.error_contains.strip().casefold()) and wanted not in error:
            return False
        if text := self.text.strip():
            found = text.casefold() in error or text.casefold() in title.casefold()
            return found or text in (job.id, job.target_id)
        return True

    def conditions(self) -> list[sa.ColumnElement[bool]]:
        found: list[sa.ColumnElement[bool]] = []
        if self.statuses:
            found.append(AsyncJob.status.in_(sorted(self.statuses)))
        if self.job_types:
            found.append(AsyncJob.job_type.in_(sorted(self.job_types)))
        if self.ids:
            found.append(AsyncJob.id.in_(sorted(self.ids)))
        if error := self.error_contains.strip():
            found.append(AsyncJob.error_message.like(_like(error), escape="\\"))
        if text := self.text.strip():
            pattern = _like(text)
            titled = sa.select(KnowledgeCard.scrap_id).where(KnowledgeCard.title.like(pattern, escape="\\"))
            found.append(
                sa.or_(
                    AsyncJob.error_message.like(pattern, escape="\\"),
                    AsyncJob.id == text,
                    AsyncJob.target_id == text,
                    AsyncJob.target_id.in_(titled),
                )
            )
        return found


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass(frozen=True)
class FailureGroup:
    """Failed jobs whose errors differ only in ids, numbers and addresses."""

    signature: str
    count: int
    first_seen: datetime
    last_seen: datetime
    example: str  # the newest error chain of the group
    job_types: tuple[JobType, ...] = field(default=())
    # each (job type, payload) among them: what a job does may depend on its payload (a CARD_ANALYSIS that
    # only re-embeds), and the group names its jobs as the list does
    kinds: tuple[tuple[JobType, str | None], ...] = field(default=())


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>)]*[^\s'\"<>).,:;]", re.IGNORECASE)
_UUID = re.compile(r"\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b", re.IGNORECASE)
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w.])(?:/[^\s/'\"<>:]+){2,}")
# a number is masked unless it is an HTTP status (what the server said: a 500 and a 401 are different failures)
_NUMBER = re.compile(r"(?P<status>(?:(?<=\bHTTP )|(?<=HTTPStatusError: )|(?<=\banswered ))[1-5]\d\d\b)|\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")


def error_signature(message: str | None) -> str:
    """The error chain with what varies between occurrences of the same failure masked: addresses as
    ``<url>``, ids as ``<id>``, file paths as ``<path>``, numbers as ``#`` (the exception types and HTTP
    status codes stay)."""
    text = message or "(no error text)"
    text = _URL.sub("<url>", text)
    text = _UUID.sub("<id>", text)
    text = _HEX.sub("<id>", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub(lambda found: found.group("status") or "#", text)
    return _SPACE.sub(" ", text).strip()[:SIGNATURE_LIMIT]


def superseded() -> sa.Exists:
    """Whether the work (type and target) of the query's ``AsyncJob`` has a later job, whatever became of it
    (it says what the work needs now), or another one waiting or running."""
    other = aliased(AsyncJob)
    return (
        sa.select(other.id)
        .where(
            other.job_type == AsyncJob.job_type,
            other.target_id == AsyncJob.target_id,
            other.id != AsyncJob.id,
            sa.or_(other.id > AsyncJob.id, other.status.in_(ACTIVE_JOB_STATUSES)),
        )
        .exists()
    )


class JobMonitor:
    """Reading and bulk-changing many jobs at once, on the queue's database and listeners."""

    def __init__(self, queue: JobStore) -> None:
        self.queue = queue
        self.db = queue.db

    # --- reading ------------------------------------------------------------------------------

    def list_jobs(
        self, where: JobFilter = JobFilter(), *, before_id: str | None = None, limit: int = 200
    ) -> list[JobRecord]:
        """Newest first; page with ``before_id`` (the last id of the previous page)."""
        query = sa.select(AsyncJob).where(*where.conditions()).order_by(AsyncJob.id.desc()).limit(limit)
        if before_id is not None:
            query = query.where(AsyncJob.id < before_id)
        with self.db.sessions() as session:
            return [JobRecord.from_row(row) for row in session.scalars(query)]

    def counts(self, where: JobFilter = JobFilter()) -> dict[JobStatus, int]:
        """How many jobs of each status match ``where`` apart from its statuses (the filter's live
        counts); every status is present."""
        query = (
            sa.select(AsyncJob.status, sa.func.count())
            .where(*replace(where, statuses=frozenset()).conditions())
            .group_by(AsyncJob.status)
        )
        with self.db.sessions() as session:
            found = {JobStatus(status): int(n) for status, n in session.execute(query)}
        return {status: found.get(status, 0) for status in JobStatus}

    def matching_ids(self, where: JobFilter, statuses: Sequence[JobStatus]) -> list[str]:
        """Ids of the jobs matching ``where`` that are in one of ``statuses``, oldest first."""
        wanted = set(statuses) & set(where.statuses) if where.statuses else set(statuses)
        if not wanted:
            return []
        query = (
            sa.select(AsyncJob.id).where(*replace(where, statuses=frozenset(wanted)).conditions()).order_by(AsyncJob.id)
        )
        with self.db.sessions() as session:
            return list(session.scalars(query))

    def failure_groups(self, job_types: Iterable[JobType] = ()) -> list[FailureGroup]:
        """FAILED jobs grouped by error signature, the largest group first. SQL groups identical
        messages; only the distinct messages are masked here."""
        query = sa.select(
            AsyncJob.error_message,
            AsyncJob.job_type,
            AsyncJob.payload,
            sa.func.count(),
            sa.func.min(AsyncJob.updated_at),
            sa.func.max(AsyncJob.updated_at),
        ).where(AsyncJob.status == JobStatus.FAILED)
        if type_list := sorted(job_types):
            query = query.where(AsyncJob.job_type.in_(type_list))
        query = query.group_by(AsyncJob.error_message, AsyncJob.job_type, AsyncJob.payload)
        groups: dict[str, FailureGroup] = {}
        with self.db.sessions() as session:
            rows = session.execute(query).all()
        for message, job_type, payload, count, first, last in rows:
            signature = error_signature(message)
            known = groups.get(signature)
            kind = (JobType(job_type), payload)
            if known is None:
                groups[signature] = FailureGroup(signature, int(count), first, last, message or "", (kind[0],), (kind,))
                continue
            groups[signature] = FailureGroup(
                signature,
                known.count + int(count),
                min(known.first_seen, first),
                max(known.last_seen, last),
                message or "" if last > known.last_seen else known.example,
                tuple(sorted({*known.job_types, kind[0]})),
                tuple(sorted({*known.kinds, kind}, key=lambda item: (item[0], item[1] or ""))),
            )
        return sorted(groups.values(), key=lambda group: (-group.count, group.signature))

    def failed_by_the_server(self, job_types: Iterable[JobType]) -> list[str]:
        """Ids of the FAILED jobs of ``job_types`` whose error was transient (the server answered an error, did
        not answer in time, could not be reached) and that are the newest job of their work, oldest first."""
        query = (
            sa.select(AsyncJob.id)
            .where(
                AsyncJob.status == JobStatus.FAILED,
                AsyncJob.error_kind == ErrorKind.TRANSIENT,
                AsyncJob.job_type.in_(sorted(job_types)),
                ~superseded(),
            )
            .order_by(AsyncJob.id)
        )
        with self.db.sessions() as session:
            return list(session.scalars(query))

    def failed_ids_of_group(self, signature: str) -> list[str]:
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(AsyncJob.id, AsyncJob.error_message)
                .where(AsyncJob.status == JobStatus.FAILED)
                .order_by(AsyncJob.id)
            ).all()
        return [job_id for job_id, message in rows if error_signature(message) == signature]

    def failures_on_screen(self, shown: bool) -> None:
        """The failure groups are (or are no longer) on screen: their jobs are kept meanwhile."""
        self.queue.failures_on_screen(shown)

    # --- bulk actions -------------------------------------------------------------------------

    def retry(self, job_ids: Iterable[str], progress: Callable[[int], None] | None = None) -> BulkResult:
        """Queue failed or cancelled jobs again (``JobStore.retry_jobs``)."""
        return self.queue.retry_jobs(job_ids, progress)

    def cancel(
        self,
        job_ids: Iterable[str],
        progress: Callable[[int], None] | None = None,
        *,
        statuses: Sequence[JobStatus] = ACTIVE_JOB_STATUSES,
    ) -> BulkResult:
        """Cancel the jobs still in one of ``statuses`` (``JobStore.cancel_jobs``)."""
        return self.queue.cancel_jobs(job_ids, progress, statuses=statuses)

    def retry_matching(self, where: JobFilter, progress: Callable[[int], None] | None = None) -> BulkResult:
        return self.retry(self.matching_ids(where, RETRYABLE_STATUSES), progress)

    def cancel_matching(self, where: JobFilter, progress: Callable[[int], None] | None = None) -> BulkResult:
        """Cancel the waiting or running jobs ``where`` matches; a job that started meanwhile is cancelled
        only if ``where`` takes running jobs too."""
        statuses = tuple(where.statuses & set(ACTIVE_JOB_STATUSES)) if where.statuses else ACTIVE_JOB_STATUSES
        return self.cancel(self.matching_ids(where, statuses), progress, statuses=statuses)

    def retry_group(self, signature: str, progress: Callable[[int], None] | None = None) -> BulkResult:
        return self.retry(self.failed_ids_of_group(signature), progress)
