"""The daily TIL (DESIGN.md §5, seed 002): which cards make a day, starting (or resuming) its generation
exactly once however often it is asked, and reading what was made: versions, recall cards, whether the
inputs changed since."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session, selectinload

from san_desktop.ai.base import TilCard, code_blocks
from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.enums import JobType, TilVersionKind
from san_desktop.core.errors import SanError, StorageFullError, is_storage_full
from san_desktop.core.ids import new_id
from san_desktop.core.redact import first_cause
from san_desktop.core.user_files import check_target, write_file
from san_desktop.core.workflow import TilStatus
from san_desktop.db.database import Database
from san_desktop.db.models import (
    DailySummary,
    KnowledgeCard,
    Scrap,
    TilCommit,
    TilStepOutput,
    TilVersion,
)
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.changes import Changed, Changes
from san_desktop.services.til_index import request_indexing

LINK_STEP = "link"


class TilNotFoundError(SanError):
    exit_code = 5

    def __init__(self, local_date: str) -> None:
        super().__init__(f"There is no TIL for {local_date} yet; generate it first.")


class NoCardsError(SanError):
    def __init__(self, local_date: str) -> None:
        super().__init__(f"There are no cards from {local_date}: nothing to write a TIL from.")


def parse_day(text: str) -> str:
    """``YYYY-MM-DD`` checked, or SanError saying what is expected."""
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise SanError(f"Not a date: {text!r}; give it as YYYY-MM-DD.") from None


@dataclass(frozen=True)
class DayInfo:
    local_date: str
    cards: int
    status: TilStatus | None  # None: no TIL yet
    title: str | None


@dataclass(frozen=True)
class TilVersionInfo:
    version: int
    kind: TilVersionKind
    created_at: datetime
    input_revision: str | None


@dataclass(frozen=True)
class RecallCard:
    card_id: str
    title: str
    distance: float
    within_threshold: bool  # False: nothing was close, one of the nearest few


@dataclass(frozen=True)
class TilView:
    summary_id: str
    local_date: str
    status: TilStatus
    title: str | None
    current_version: int | None
    markdown: str | None
    last_failed_step: str | None
    last_error_message: str | None  # the failure as a person reads it (the job keeps the cause chain)
    inputs_changed: bool  # the version was made from other cards than the day has now: regenerate
    versions: tuple[TilVersionInfo, ...]
    recall: tuple[RecallCard, ...]
    active_job_id: str | None


def input_revision(cards: list[tuple[str, datetime]]) -> str:
    """Which cards, in which state: a digest of (card id, last change) of the day's live cards."""
    digest = hashlib.sha256()
    for card_id, updated in sorted(cards):
        digest.update(f"{card_id}:{updated.isoformat()}\n".encode())
    return digest.hexdigest()


class TilService:
    """One TIL per local day. ``zone`` is the learner's time zone (settings, or the system's)."""

    def __init__(
        self,
        db: Database,
        queue: JobStore,
        artifacts: ArtifactStore,
        zone: Callable[[], tzinfo],
        clock: Callable[[], datetime],
    ) -> None:
        self.db = db
        self.queue = queue
        self.artifacts = artifacts
        self.zone = zone
        self.clock = clock

    # --- days ---------------------------------------------------------------------------------

    def today(self) -> str:
        return self.clock().astimezone(self.zone()).date().isoformat()

    def bounds(self, local_date: str) -> tuple[datetime, datetime]:
        """The UTC instants a local day starts and ends at (a card captured at 23:59 belongs to it)."""
        day = date.fromisoformat(local_date)
        zone = self.zone()
        start = datetime.combine(day, time.min, tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
        return start, end

    def has_cards(self, local_date: str) -> bool:
        with self.db.sessions() as session:
            return bool(self._day_cards(session, local_date))

    def days(self, limit: int = 90) -> list[DayInfo]:
        """Days that have cards, newest first, with their TIL's state. Walked day by day down the index of
        capture times (the newest card before the last day found names the next day, whose cards are
        counted in its bounds): reading every card's time took half a second at 100,000 cards."""
        live_cards = (
            sa.select(sa.func.count())
            .select_from(Scrap)
            .join(KnowledgeCard, KnowledgeCard.scrap_id == Scrap.id)
            .where(Scrap.deleted_at.is_(None))
        )
        newest = (
            sa.select(Scrap.created_at)
            .join(KnowledgeCard, KnowledgeCard.scrap_id == Scrap.id)
            .where(Scrap.deleted_at.is_(None))
            .order_by(Scrap.created_at.desc())
            .limit(1)
        )
        zone = self.zone()
        counts: dict[str, int] = {}
        with self.db.sessions() as session:
            before: datetime | None = None
            while len(counts) < limit:
                moment = session.scalar(newest if before is None else newest.where(Scrap.created_at < before))
                if moment is None:
                    break
                day = moment.astimezone(zone).date().isoformat()
                start, end = self.bounds(day)
                counts[day] = int(
                    session.scalar(live_cards.where(Scrap.created_at >= start, Scrap.created_at < end)) or 0
                )
                before = start
            summaries = {row.local_date: row for row in session.scalars(sa.select(DailySummary))}
            days = sorted(set(counts) | set(summaries), reverse=True)[:limit]
            return [
                DayInfo(
                    day,
                    counts.get(day, 0),
                    summaries[day].status if day in summaries else None,
                    summaries[day].title if day in summaries else None,
                )
                for day in days
            ]

    def _day_cards(self, session: Session, local_date: str) -> list[KnowledgeCard]:
        start, end = self.bounds(local_date)
        return list(
            session.scalars(
                sa.select(KnowledgeCard)
                .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
                .where(Scrap.deleted_at.is_(None), Scrap.created_at >= start, Scrap.created_at < end)
                .options(selectinload(KnowledgeCard.tags), selectinload(KnowledgeCard.category))
                .order_by(Scrap.created_at)
            )
        )

    def collect(self, local_date: str) -> tuple[list[TilCard], str]:
        """The day's cards as the TIL writer gets them, and their input revision."""
        with self.db.sessions() as session:
            cards = self._day_cards(session, local_date)
            result = [
                TilCard(
                    card_id=card.id,
                    title=card.title,
                    summary=card.summary,
                    tags=tuple(sorted((tag.name for tag in card.tags), key=str.casefold)),
                    category=card.category.name if card.category else "Other",
                    source_ref=card.scrap.source_ref,
                    code_blocks=code_blocks(card.scrap.content),
                )
                for card in cards
            ]
            return result, input_revision([(card.id, card.updated_at) for card in cards])

    def current_revision(self, session: Session, local_date: str) -> str:
        return input_revision([(card.id, card.updated_at) for card in self._day_cards(session, local_date)])

    # --- generation ---------------------------------------------------------------------------

    def generate(self, local_date: str) -> JobRecord:
        """Start generating (or resume) the day's TIL; a request while one is active returns that job.
        The summary is created and its job enqueued in one immediate transaction (seed 002; on a server,
        serialised on the day), so two requests at once make one summary and one job."""
        local_date = parse_day(local_date)
        with self.db.write() as session:
            self.db.serialize(session, f"til-request:{local_date}")
            summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == local_date))
            if summary is None:
                if not self._day_cards(session, local_date):
                    raise NoCardsError(local_date)
                summary = DailySummary(local_date=local_date, status=TilStatus.CREATED)
                session.add(summary)
                session.flush()
            return self.queue.active_or_enqueue(session, JobType.TIL_GENERATION, summary.id)

    # --- reading ------------------------------------------------------------------------------

    def labels(self, summary_ids: list[str]) -> dict[str, str]:
        """A human label per daily summary ("TIL of 2026-11-30"), for job lists."""
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(DailySummary.id, DailySummary.local_date).where(DailySummary.id.in_(summary_ids))
            ).all()
        return {summary_id: f"TIL of {local_date}" for summary_id, local_date in rows}

    def get(self, local_date: str) -> TilView:
        local_date = parse_day(local_date)
        with self.db.sessions() as session:
            summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == local_date))
            if summary is None:
                raise TilNotFoundError(local_date)
            versions = session.scalars(
                sa.select(TilVersion).where(TilVersion.summary_id == summary.id).order_by(TilVersion.version)
            ).all()
            current = next((v for v in versions if v.version == summary.current_version), None)
            link = session.scalar(
                sa.select(TilStepOutput)
                .where(TilStepOutput.summary_id == summary.id, TilStepOutput.step == LINK_STEP)
                .order_by(TilStepOutput.id.desc())
                .limit(1)
            )
            recall = tuple(RecallCard(**item) for item in json.loads(link.data or "[]")) if link else ()
            changed = current is not None and (
                current.input_revision is None or current.input_revision != self.current_revision(session, local_date)
            )
            return TilView(
                summary_id=summary.id,
                local_date=summary.local_date,
                status=summary.status,
                title=summary.title,
                current_version=summary.current_version,
                markdown=self.artifacts.read_text(current.artifact_key) if current else None,
                last_failed_step=summary.last_failed_step,
                last_error_message=first_cause(summary.last_error_message) or None,  # the sentence
                inputs_changed=changed,
                versions=tuple(TilVersionInfo(v.version, v.kind, v.created_at, v.input_revision) for v in versions),
                recall=recall,
                active_job_id=self.queue.active_job_id(session, JobType.TIL_GENERATION, summary.id),
            )

    def version_text(self, local_date: str, version: int) -> str:
        with self.db.sessions() as session:
            key = session.scalar(
                sa.select(TilVersion.artifact_key)
                .join(DailySummary, DailySummary.id == TilVersion.summary_id)
                .where(DailySummary.local_date == parse_day(local_date), TilVersion.version == version)
            )
        if key is None:
            raise SanError(f"The TIL of {local_date} has no version {version}.")
        return self.artifacts.read_text(key)

    def save_edit(self, local_date: str, text: str, keep: int) -> Changed[int]:
        """The learner's text as a new EDITED version (never over the generated one), made current; only
        the last ``keep`` edited versions stay (and any a commit refers to). Returns the version."""
        local_date = parse_day(local_date)
        data = text.encode("utf-8")
        with self.db.write() as session:
            summary = session.scalar(sa.select(DailySummary).where(DailySummary.local_date == local_date))
            if summary is None or summary.current_version is None:
                raise TilNotFoundError(local_date)
            version = self.next_version(session, summary.id)
            run = self.artifacts.run(new_id())
            key = run.write_bytes("til", summary.id, version, "md", data)
            try:
                current = session.scalar(
                    sa.select(TilVersion).where(
                        TilVersion.summary_id == summary.id, TilVersion.version == summary.current_version
                    )
                )
                revision = current.input_revision if current else None
                self.add_version(session, summary, TilVersionKind.EDITED, key, data, revision, version=version)
                self._prune_edits(session, summary.id, keep)
                request_indexing(session, self.queue, summary.id)  # the edited text into search and meaning
            except BaseException:
                run.discard()
                raise
            run.publish_pending()
        return Changed(version, Changes(tils=frozenset({local_date})))

    @staticmethod
    def next_version(session: Session, summary_id: str) -> int:
        """The number the day's next version gets: one past the newest, generated or edited."""
        newest = session.scalar(sa.select(sa.func.max(TilVersion.version)).where(TilVersion.summary_id == summary_id))
        return (newest or 0) + 1

    @classmethod
    def add_version(
        cls,
        session: Session,
        summary: DailySummary,
        kind: TilVersionKind,
        artifact_key: str,
        data: bytes,
        input_revision: str | None,
        *,
        run_id: str | None = None,
        version: int | None = None,
    ) -> int:
        """A new version of the day's TIL (its text in ``artifact_key``), made current, in the caller's
        transaction; numbered by ``next_version`` unless the caller took its number already (to name its
        file). A number taken meanwhile fails here, before anything is overwritten."""
        number = version if version is not None else cls.next_version(session, summary.id)
        session.add(
            TilVersion(
                summary_id=summary.id,
                version=number,
                kind=kind,
                artifact_key=artifact_key,
                content_hash=hashlib.sha256(data).hexdigest(),
                input_revision=input_revision,
                run_id=run_id,
            )
        )
        session.flush()
        summary.current_version = number
        return number

    @staticmethod
    def _prune_edits(session: Session, summary_id: str, keep: int) -> None:
        edits = session.scalars(
            sa.select(TilVersion)
            .where(TilVersion.summary_id == summary_id, TilVersion.kind == TilVersionKind.EDITED)
            .order_by(TilVersion.version.desc())
        ).all()
        committed = set(session.scalars(sa.select(TilCommit.version).where(TilCommit.summary_id == summary_id)))
        for old in edits[keep:]:
            if old.version not in committed:
                session.delete(old)  # its file goes with the next orphan sweep

    def export(self, local_date: str, out: Path, *, overwrite: bool = False, dry_run: bool = False) -> bool:
        """Write the day's current text to the Markdown file ``out``: a new file, or with ``overwrite`` a
        regular file replaced once the new one is whole (never a link, a folder or a device). Returns whether
        a file was (or, with ``dry_run``, would be) replaced; ``dry_run`` writes nothing."""
        view = self.get(local_date)
        if view.markdown is None:
            raise SanError(f"The TIL of {view.local_date} has no text yet (it is {view.status.value.lower()}).")
        replaces = check_target(
            out,
            suffix=".md",
            why="a TIL note is Markdown",
            example=f"TIL-{view.local_date}.md",
            overwrite=overwrite,
        )
        if dry_run:
            return replaces
        data = view.markdown.encode("utf-8")
        try:
            write_file(out, lambda temporary: temporary.write_bytes(data), overwrite=overwrite)
        except OSError as exc:
            if is_storage_full(exc):
                raise StorageFullError(out, "the TIL was not exported") from exc
            raise SanError(f"Cannot write {out}: {exc.strerror or exc}.") from exc
        return replaces

    @staticmethod
    def referenced(session: Session) -> set[str]:
        """Artifact keys some row refers to (what the orphan sweep must keep)."""
        keys = set(session.scalars(sa.select(TilVersion.artifact_key)))
        keys |= {key for key in session.scalars(sa.select(TilStepOutput.artifact_key)) if key}
        return keys
