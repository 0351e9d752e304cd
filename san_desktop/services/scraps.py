"""Scraps (seed 001): capture with dedupe, the jobs that follow a new scrap, listing, delete and undo."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType, SourceType
from san_desktop.core.errors import SanError, TargetNotFoundError
from san_desktop.core.ids import new_id
from san_desktop.core.inputs import read_file
from san_desktop.core.text import (
    DEFAULT_MAX_CAPTURE_BYTES,
    RejectedContentError,
    check_capturable,
    content_hash,
    decode_bytes,
    html_to_text,
    normalize,
    preview,
    without_surrogates,
)
from san_desktop.core.timeutil import utcnow
from san_desktop.core.urls import normalize_url, without_userinfo
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database, SessionOrConnection
from san_desktop.db.tables import async_jobs, knowledge_cards, scraps
from san_desktop.queue.errors import DuplicateJobError, JobCancelledError
from san_desktop.queue.store import SWEEP_HOOK_BATCH, JobStore
from san_desktop.services.changes import Changed, Changes

if TYPE_CHECKING:  # capturing runs on SQLAlchemy Core; the rest loads the ORM when first used
    from sqlalchemy.orm import Session

    from san_desktop.services.scrap_info import ScrapInfo
    from san_desktop.services.trash import TrashService
    from san_desktop.web.endpoint import BrowserCapture

log = logging.getLogger(__name__)

SCRAP_NOTICE = "scrap"  # the kind of change notice for a scrap
TEXT_FILE_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")

# A link scrap whose page was not fetched yet: analysing or refining it waits for the page.
AWAITING_PAGE = sa.and_(scraps.c.source_type == SourceType.URL, scraps.c.content == scraps.c.source_ref)


class ScrapNotFoundError(SanError):
    exit_code = 5

    def __init__(self, scrap_id: str) -> None:
        super().__init__(f"There is no scrap with id {scrap_id}.")


class ScrapTrashedError(JobCancelledError):
    """A job found its scrap in the Trash: it ends cancelled, as the delete cancelled its other jobs (not
    failed: nothing went wrong), and restoring the scrap asks for its work again."""

    def __init__(self, scrap_id: str) -> None:
        super().__init__(f"scrap {scrap_id} is in the Trash")


@dataclass(frozen=True)
class CaptureResult:
    scrap_id: str
    created: bool  # False: the same content was scrapped before ("already scrapped")
    analysis_job_id: str | None
    refine_job_id: str | None
    fetch_job_id: str | None = None  # a link's page download (analysis and refinement follow it)

    @property
    def duplicate(self) -> bool:
        return not self.created

    @property
    def changes(self) -> Changes:
        return Changes(scraps=frozenset({self.scrap_id}))


@dataclass(frozen=True)
class ScrapText:
    """A scrap's text as a job reads it."""

    content: str
    refined: str | None
    title: str | None = None  # a link's page title (a link not fetched has only its address and this)

    @property
    def best(self) -> str:
        text = self.refined or self.content
        if self.title and self.title not in text.lstrip().split("\n", 1)[0]:
            return f"# {self.title}\n\n{text}"
        return text


# built once: building a statement cost five times executing it
_SCRAP_TEXT = sa.select(scraps.c.content, scraps.c.refined_content, scraps.c.title, scraps.c.deleted_at).where(
    scraps.c.id == sa.bindparam("scrap")
)
_SCRAP_DELETED_AT = sa.select(scraps.c.deleted_at).where(scraps.c.id == sa.bindparam("scrap"))
_REFINE_SCRAP = (
    sa.update(scraps)
    .where(scraps.c.id == sa.bindparam("scrap"), scraps.c.deleted_at.is_(None))
    .values(refined_content=sa.bindparam("refined"))
)


class ScrapService:
    def __init__(
        self,
        db: Database,
        queue: JobStore,
        max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
        changelog: ChangeLog | None = None,
    ) -> None:
        self.db = db
        self.queue = queue
        self.max_bytes = max_bytes
        self.changelog = changelog  # notices for other open windows, written with each change

    def _notice(self, session: SessionOrConnection, scrap_id: str) -> None:
        if self.changelog is not None:
            self.changelog.record(session, SCRAP_NOTICE, [scrap_id])

    # --- capture ------------------------------------------------------------------------------

    def capture(
        self,
        content: str,
        source_type: SourceType = SourceType.TEXT,
        source_ref: str | None = None,
        raw_content: str | None = None,
    ) -> CaptureResult:
        """Store ``content`` as a scrap with its CARD_ANALYSIS and SCRAP_REFINE jobs, all in one
        transaction; or report the existing scrap of the same content and source type. Raises
        ``RejectedContentError`` for empty, binary or oversized content (nothing is stored)."""
        normalized = check_capturable(content, self.max_bytes)
        if raw_content is not None and len(raw_content.encode("utf-8", "replace")) > self.max_bytes:
            # the readable text is what the user scrapped; a bloated source (inline styles, scripts) is
            # not kept rather than stored past the limit
            log.info("Not keeping the %d-character source of a scrap: over the size limit", len(raw_content))
            raw_content = None
        digest = content_hash(normalized)
        with self.db.write_connection() as connection:
            existing = self._live_scrap_id(connection, source_type, digest)
            if existing is not None:
                return self._on_duplicate(connection, existing)
            scrap = {
                "source_type": source_type,
                # (a selection's page: kept as given, but never its user and password)
                "source_ref": without_userinfo(without_surrogates(source_ref)) if source_ref else source_ref,
                "content": normalized,
                "raw_content": raw_content,
                "content_hash": digest,
            }
            scrap_id, existing = self._insert(connection, scrap)
            if existing is not None:
                return self._on_duplicate(connection, existing)
            analysis = self.queue.enqueue(JobType.CARD_ANALYSIS, scrap_id, session=connection)
            refine = self.queue.enqueue(JobType.SCRAP_REFINE, scrap_id, session=connection)
            self._notice(connection, scrap_id)
        log.info("Scrapped %s (%s, %d characters)", scrap_id, source_type.value, len(normalized))
        return CaptureResult(scrap_id, True, analysis.id, refine.id)

    def capture_html(self, markup: str, source_ref: str | None = None) -> CaptureResult:
        """HTML is stored as readable text, with the HTML source kept beside it."""
        return self.capture(html_to_text(markup), SourceType.HTML, source_ref, raw_content=markup)

    def capture_url(self, url: str, title: str | None = None) -> CaptureResult:
        """A web address is stored at once, under its normalised form (the same page scrapped again with
        other tracking parameters is the same scrap), with a PAGE_FETCH job that downloads the page and
        then asks for the card. Other addresses (mailto:, ftp:) are scrapped as text."""
        title = _one_line(title)
        try:
            address = normalize_url(url)
        except ValueError:  # (its text is the address: without a user:password@ there either)
            address = without_userinfo(url.strip())
            text = f"{title}\n{address}" if title and title != address else address
            return self.capture(text, SourceType.URL, address)
        check_capturable(address, self.max_bytes)
        digest = content_hash(address)
        with self.db.write_connection() as connection:
            existing = self._live_scrap_id(connection, SourceType.URL, digest)
            if existing is None:
                scrap_id, existing = self._insert(
                    connection, _link(address, address, title if title != address else None)
                )
            if existing is not None:
                return self._on_duplicate(connection, existing)
            fetch = self.queue.enqueue(JobType.PAGE_FETCH, scrap_id, session=connection)
            self._notice(connection, scrap_id)
        log.info("Scrapped a link %s; its page will be fetched", scrap_id)
        return CaptureResult(scrap_id, True, None, None, fetch.id)

    def capture_from_browser(self, sent: BrowserCapture) -> CaptureResult:
        """What the browser extension sent: a page as the reader saw it (its article, which the endpoint read
        from the DOM it sent out of this process: no download), a selection (text, its page as the source), or
        a link (fetched as any link)."""
        if sent.kind == "link":
            return self.capture_url(sent.url, sent.title)
        if sent.kind == "page" and sent.text is not None:
            return self.capture_page(sent.url, sent.title, sent.text)
        if not (sent.selection or "").strip():
            raise SanError("Nothing to scrap: no text is selected on the page.")
        return self.capture(sent.selection or "", SourceType.TEXT, sent.url)

    def capture_page(self, url: str, title: str, text: str) -> CaptureResult:
        """A page as the reader's browser showed it (its article already taken from the DOM it sent): stored
        as a link's scrap whose page is in, with its analysis and refinement, and no download. A link of the
        same address still waiting for its page takes this text instead (the page came in: not a duplicate, so
        the browser's badge says scrapped); one with its page is a duplicate."""
        try:
            address = normalize_url(url)
        except ValueError:
            return self.capture(text, SourceType.URL, url.strip())
        body = check_capturable(text, self.max_bytes)
        shown_title = _one_line(title)
        digest = content_hash(address)
        with self.db.write_connection() as connection:
            existing = self._live_scrap_id(connection, SourceType.URL, digest)
            if existing is None:
                scrap_id, existing = self._insert(connection, _link(address, body, shown_title))
            if existing is not None:
                awaiting = connection.scalar(sa.select(scraps.c.id).where(scraps.c.id == existing, AWAITING_PAGE))
                if awaiting is None:
                    return self._on_duplicate(connection, existing)
                connection.execute(
                    sa.update(scraps).where(scraps.c.id == existing).values(content=body, title=shown_title)
                )
                scrap_id = existing  # (its fetch, if one waits, finds the page in and downloads nothing)
            analysis = self.queue.active_or_enqueue(connection, JobType.CARD_ANALYSIS, scrap_id)
            refine = self.queue.active_or_enqueue(connection, JobType.SCRAP_REFINE, scrap_id)
            self._notice(connection, scrap_id)
        log.info("Scrapped a page from the browser %s (%d characters)", scrap_id, len(body))
        return CaptureResult(scrap_id, True, analysis.id, refine.id)

    def analyse_link_now(self, scrap_id: str) -> Changed[str]:
        """Make the card of a link from its address and title alone (its page could not be fetched, or the
        user will not wait); the id of the CARD_ANALYSIS job."""
        from san_desktop.db.models import Scrap

        with self.db.write() as session:
            scrap = session.get(Scrap, scrap_id)
            if scrap is None or scrap.deleted_at is not None:
                raise ScrapNotFoundError(scrap_id)
            if self.queue.active_job_id(session, JobType.PAGE_FETCH, scrap_id) is not None:
                raise SanError("The link's page is still being fetched: its card follows the page.")
            job = self.queue.active_or_enqueue(session, JobType.CARD_ANALYSIS, scrap_id)
            self._notice(session, scrap_id)
        return Changed(job.id, Changes(scraps=frozenset({scrap_id})))

    def text_of(self, scrap_id: str) -> ScrapText:
        """The scrap's text, for a job: one in the Trash stops the job (``ScrapTrashedError``), one deleted for good
        fails it (``TargetNotFoundError``)."""
        with self.db.engine.connect() as conn:
            row = conn.execute(_SCRAP_TEXT, {"scrap": scrap_id}).first()
        if row is None:
            raise TargetNotFoundError(f"scrap {scrap_id}")
        if row.deleted_at is not None:
            raise ScrapTrashedError(scrap_id)
        return ScrapText(row.content, row.refined_content, row.title)

    def link_of(self, scrap_id: str) -> tuple[str, str]:
        """A link's address and the scrap's text (its address until its page came), for the page's download."""
        with self.db.engine.connect() as conn:
            row = conn.execute(
                sa.select(scraps.c.source_ref, scraps.c.content, scraps.c.deleted_at).where(scraps.c.id == scrap_id)
            ).first()
        if row is not None and row.deleted_at is not None:
            raise ScrapTrashedError(scrap_id)
        if row is None or not row.source_ref:
            raise TargetNotFoundError(f"scrap {scrap_id}")
        return row.source_ref, row.content

    @staticmethod
    def save_refined(session: Session, scrap_id: str, refined: str, original: str) -> None:
        """Keep a refined text beside the scrap's own, in the refinement job's completing ``session``: "" when refining
        changed nothing but blank lines (refined, and no second copy of the text kept)."""
        kept = refined if refined and _lines(refined) != _lines(original) else ""
        conn = session.connection()
        if conn.execute(_REFINE_SCRAP, {"scrap": scrap_id, "refined": kept}).rowcount != 1:
            if conn.execute(_SCRAP_DELETED_AT, {"scrap": scrap_id}).first() is not None:
                raise ScrapTrashedError(scrap_id)  # (moved to the Trash while it was refined)
            raise TargetNotFoundError(f"scrap {scrap_id}")

    def save_page(self, session: Session, scrap_id: str, title: str, text: str) -> None:
        """Store a link's fetched page as the scrap's text (in the fetch job's completing transaction) and
        ask for its card and refinement in the same transaction."""
        from san_desktop.db.models import Scrap

        scrap = session.get(Scrap, scrap_id)
        if scrap is None:
            raise TargetNotFoundError(f"scrap {scrap_id} was deleted")
        if scrap.deleted_at is not None:
            raise ScrapTrashedError(scrap_id)
        body = normalize(text)
        if len(body.encode("utf-8")) > self.max_bytes:
            body = body.encode("utf-8")[: self.max_bytes].decode("utf-8", "ignore")
            body = body[: body.rfind("\n")].rstrip() if "\n" in body else body
        scrap.content = body or scrap.content
        scrap.title = title or scrap.title
        scrap.refined_content = None
        self.queue.active_or_enqueue(session, JobType.CARD_ANALYSIS, scrap_id)
        self.queue.active_or_enqueue(session, JobType.SCRAP_REFINE, scrap_id)
        self._notice(session, scrap_id)

    @staticmethod
    def _insert(connection: sa.Connection, scrap: dict[str, Any]) -> tuple[str, str | None]:
        """Add a row of ``scraps`` with the values ``scrap`` (its id and its time are made here): its id, and
        None; or, when another process stored the same content first, the id of theirs."""
        values = {**scrap, "id": new_id(), "created_at": utcnow()}
        try:
            with connection.begin_nested():
                connection.execute(sa.insert(scraps).values(values))
        except IntegrityError:
            existing = ScrapService._live_scrap_id(connection, scrap["source_type"], scrap["content_hash"])
            if existing is None:
                raise
            return values["id"], existing
        return values["id"], None

    def capture_file(self, path: Path) -> CaptureResult:
        if path.is_dir():
            raise RejectedContentError(f"{path} is a folder, not a file; nothing was scrapped.")
        if not path.exists():  # a missing file is called missing, whatever its name
            raise RejectedContentError(f"No such file: {path}.")
        if path.suffix.lower() not in TEXT_FILE_SUFFIXES:
            raise RejectedContentError(
                f"{path.name}: only text files can be scrapped ({', '.join(TEXT_FILE_SUFFIXES)})."
            )
        text = decode_bytes(read_file(path, self.max_bytes), path.name)  # the decoded text is checked again below
        if path.suffix.lower() in (".html", ".htm"):
            return self.capture(html_to_text(text), SourceType.FILE, path.name, raw_content=text)
        return self.capture(text, SourceType.FILE, path.name)

    @staticmethod
    def _live_scrap_id(session: SessionOrConnection, source_type: SourceType, digest: str) -> str | None:
        return session.scalar(
            sa.select(scraps.c.id).where(
                scraps.c.source_type == source_type, scraps.c.content_hash == digest, scraps.c.deleted_at.is_(None)
            )
        )

    def _on_duplicate(self, session: SessionOrConnection, scrap_id: str) -> CaptureResult:
        """Already scrapped: analyse it again only if it has no card and no analysis waiting (a link still
        without its page: fetch it again)."""
        has_card = session.scalar(sa.select(knowledge_cards.c.id).where(knowledge_cards.c.scrap_id == scrap_id))
        awaiting = session.scalar(sa.select(scraps.c.id).where(scraps.c.id == scrap_id, AWAITING_PAGE))
        if has_card is None and awaiting is not None:
            fetch = self.queue.active_or_enqueue(session, JobType.PAGE_FETCH, scrap_id)
            return CaptureResult(scrap_id, False, None, None, fetch.id)
        analysis_id = None
        if has_card is None:
            try:
                analysis_id = self.queue.enqueue(JobType.CARD_ANALYSIS, scrap_id, session=session).id
            except DuplicateJobError as exc:
                analysis_id = exc.existing_job_id
        return CaptureResult(scrap_id, False, analysis_id, None)

    # --- delete and undo ----------------------------------------------------------------------

    def delete(self, scrap_id: str) -> None:
        """Move a scrap to the Trash with its card and quizzes (``services.trash``); ``restore`` undoes it."""
        self._trash().delete([scrap_id])

    def restore(self, scrap_id: str) -> None:
        """Bring a scrap back from the Trash (the rest of the entry it was deleted with stays there)."""
        self._trash().restore_scrap(scrap_id)

    def _trash(self) -> TrashService:
        from san_desktop.services.trash import TrashService

        return TrashService(self.db, self.queue, changelog=self.changelog)

    # --- reading ------------------------------------------------------------------------------

    def list_scraps(self, *, limit: int = 200, before_id: str | None = None) -> list[ScrapInfo]:
        """Live scraps, newest first."""
        from san_desktop.services.scrap_info import scrap_infos

        query = sa.select(scraps.c.id).where(scraps.c.deleted_at.is_(None)).order_by(scraps.c.id.desc()).limit(limit)
        if before_id:
            query = query.where(scraps.c.id < before_id)
        with self.db.sessions() as session:
            ids = list(session.scalars(query))
            return scrap_infos(session, ids)

    def count_scraps(self) -> int:
        """How many live scraps there are (what ``list_scraps`` pages through)."""
        with self.db.sessions() as session:
            live = sa.select(sa.func.count()).select_from(scraps).where(scraps.c.deleted_at.is_(None))
            return int(session.scalar(live) or 0)

    def get(self, scrap_id: str) -> ScrapInfo:
        infos = self.get_many([scrap_id])
        if not infos:
            raise ScrapNotFoundError(scrap_id)
        return infos[0]

    def get_many(self, scrap_ids: list[str]) -> list[ScrapInfo]:
        """The scraps among ``scrap_ids`` that exist (deleted ones included, marked so)."""
        from san_desktop.services.scrap_info import scrap_infos

        with self.db.sessions() as session:
            return scrap_infos(session, scrap_ids)

    def labels(self, scrap_ids: list[str]) -> dict[str, str]:
        """A human label per scrap (its card's title, or the start of its text), for job lists."""
        if not scrap_ids:
            return {}
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(scraps.c.id, scraps.c.content, knowledge_cards.c.title)
                .outerjoin(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
                .where(scraps.c.id.in_(scrap_ids))
            ).all()
        return {row.id: row.title or preview(row.content, 60) for row in rows}


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _one_line(title: str | None) -> str | None:
    """A title as given, on one line, storable (a lone surrogate replaced); None for an empty one."""
    return " ".join(without_surrogates(title or "").split()) or None


def _link(address: str, content: str, title: str | None) -> dict[str, Any]:
    """A link's scrap: found again by its normalised address (hashed), whatever its text becomes."""
    return {
        "source_type": SourceType.URL,
        "source_ref": address,
        "content": content,
        "content_hash": content_hash(address),
        "title": title,
    }


# which of a scrap's columns says that its work of each type stopped (failed for good, or cancelled)
STOPPED_WORK = {
    JobType.PAGE_FETCH: scraps.c.fetch_stopped,
    JobType.CARD_ANALYSIS: scraps.c.analysis_stopped,
    JobType.SCRAP_REFINE: scraps.c.refine_stopped,
}


def remember_stopped_work(session: Session) -> None:
    """Scraps whose fetch, analysis or refinement job failed for good or was cancelled say so themselves,
    before the sweep prunes those jobs (the prune hook calls this first, in the same transaction). A flag
    set stays: the work is asked for again only by a person (a retry, Analyse again), whose job makes it or
    fails it again; with a card or a refined text made, the flag no longer matters."""
    for job_type, column in STOPPED_WORK.items():
        ended = sa.select(async_jobs.c.target_id).where(
            async_jobs.c.job_type == job_type, async_jobs.c.status.in_((JobStatus.FAILED, JobStatus.CANCELLED))
        )
        # (not of a scrap in the Trash: its delete cancelled its jobs, and its restore asks for them again)
        live = scraps.c.deleted_at.is_(None)
        session.execute(sa.update(scraps).where(column.is_(False), live, scraps.c.id.in_(ended)).values({column: True}))


def orphan_hook(session: Session, queue: JobStore) -> int:
    """Recovery rule (seed 001): scraps without a card and without an active CARD_ANALYSIS job get one;
    scraps without refined content and without an active SCRAP_REFINE job get one. A link still without
    its page gets a PAGE_FETCH job instead (its analysis follows the page)."""
    # a scrap whose job failed for good, or was cancelled by the user, is left for the user to retry (the
    # job monitor), not re-run forever or against their will: its job says so, or, once that row is pruned,
    # the scrap itself (``remember_stopped_work`` runs before every prune)
    enqueued = 0  # at most SWEEP_HOOK_BATCH in all (the sweep calls again while any were enqueued)
    for job_type, scrap_id in _missing_work(session, scraps.c.deleted_at.is_(None), limit=SWEEP_HOOK_BATCH):
        try:
            queue.enqueue(job_type, scrap_id, session=session)
            enqueued += 1
        except DuplicateJobError:
            pass
    return enqueued


def restart_stopped_work(conn: sa.Connection, queue: JobStore, scrap_ids: Sequence[str]) -> int:
    """For scraps coming back from the Trash (still in it: called before they are restored), in the caller's
    ``write_connection``: the work their delete cancelled (analysis, refinement, a link's page) asked for again,
    as the orphan rule asks for missing work; what had failed or been cancelled before the delete stays so.
    Enqueued together (an import of thousands comes back in one transaction)."""
    before_the_delete = sa.func.coalesce(async_jobs.c.finished_at, async_jobs.c.updated_at) < scraps.c.deleted_at
    wanted: list[tuple[JobType, str]] = []
    for start in range(0, len(scrap_ids), SWEEP_HOOK_BATCH):
        among = scraps.c.id.in_(list(scrap_ids[start : start + SWEEP_HOOK_BATCH]))
        wanted += _missing_work(conn, among, ended_before=before_the_delete)
    try:
        with conn.begin_nested():
            queue.enqueue_new(conn, wanted)
    except IntegrityError:  # one was asked for meanwhile (a retry in the job monitor): one by one
        for job_type, scrap_id in wanted:
            with contextlib.suppress(DuplicateJobError):
                queue.enqueue(job_type, scrap_id, session=conn)
    return len(wanted)


def _missing_work(
    session: SessionOrConnection,
    among: sa.ColumnElement[bool],
    *,
    ended_before: sa.ColumnElement[bool] | None = None,
    limit: int | None = None,
) -> list[tuple[JobType, str]]:
    """The fetch, analysis and refinement that scraps ``among`` lack (at most ``limit`` in all): none active,
    none that failed or was cancelled (``ended_before``: only such a one counts), and the scrap does not say
    its work stopped."""
    found: list[tuple[JobType, str]] = []
    no_card = ~sa.exists().where(knowledge_cards.c.scrap_id == scraps.c.id)
    for job_type, missing in (
        (JobType.PAGE_FETCH, sa.and_(AWAITING_PAGE, no_card)),
        (JobType.CARD_ANALYSIS, sa.and_(no_card, ~AWAITING_PAGE)),
        (JobType.SCRAP_REFINE, sa.and_(scraps.c.refined_content.is_(None), ~AWAITING_PAGE)),
    ):
        of_work = (async_jobs.c.target_id == scraps.c.id, async_jobs.c.job_type == job_type)
        active = sa.exists().where(*of_work, async_jobs.c.status.in_(ACTIVE_JOB_STATUSES))
        ended = sa.exists().where(
            *of_work,
            async_jobs.c.status.in_((JobStatus.FAILED, JobStatus.CANCELLED)),
            *(() if ended_before is None else (ended_before,)),
        )
        stopped = STOPPED_WORK[job_type]
        query = sa.select(scraps.c.id).where(among, missing, ~active, ~ended, stopped.is_(False))
        if limit is not None:
            query = query.limit(limit - len(found))
        found += [(job_type, scrap_id) for scrap_id in session.scalars(query).all()]
    return found
