"""Storing what a reader found as one batch of scraps (Undo import: ``transfer.import_batches``).

A batch is stored in chunks, each one short transaction with its scraps, their jobs and their change notices:
the window's reads and the job runner's claims never wait long for the write lock, a cancel takes effect
between chunks, and what was stored before a cancel (or a kill) is a batch like any other, with Undo import.
What each item is to the library (new, a new text of what an earlier import brought, already there) is
``transfer.import_matching``'s: by the item's identity in its source, else as capture finds a duplicate (by
content hash, and for links by their normalised address)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from san_desktop.ai.base import MAX_TAG_LENGTH, MAX_TAGS
from san_desktop.core.enums import JobType, SourceType
from san_desktop.core.ids import new_id
from san_desktop.core.text import DEFAULT_MAX_CAPTURE_BYTES, RejectedContentError, check_capturable, content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.core.urls import normalize_url, without_userinfo
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database
from san_desktop.db.tables import import_batches, scraps
from san_desktop.queue.store import JobStore
from san_desktop.services.scraps import SCRAP_NOTICE
from san_desktop.transfer.import_matching import ItemOutcome, Match, Outcome, Row, adopt, match, update
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Refusal

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

CHUNK = 200  # scraps a transaction: a few milliseconds of the write lock each

Progress = Callable[[int, int], None]  # (items handled, items in all)


@dataclass(frozen=True)
class ImportSummary:
    """What an import stored (or, for a dry run, would store), with what became of each entry (``outcomes``)."""

    kind: ImportKind
    source: str
    batch_id: str | None  # None: a dry run, or nothing new to store
    imported: int
    duplicates: int  # already in the library
    refused: tuple[Refusal, ...]
    scrap_ids: tuple[str, ...]  # the new scraps
    dry_run: bool = False
    cancelled: bool = False  # stopped part way: ``imported`` were stored (Undo import removes them)
    updated: int = 0  # scraps an earlier import made, given the source's new text
    merged: int = 0  # entries that came in as part of another (a note with its highlight, one listed twice)
    outcomes: tuple[ItemOutcome, ...] = ()

    def sentence(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        words = [f"{self.imported} new scrap{'s' if self.imported != 1 else ''}"]
        if self.updated:
            words.append(f"{self.updated} updated")
        if self.duplicates:
            words.append(f"{self.duplicates} already in the library")
        if self.merged:
            words.append(f"{self.merged} merged into another")
        if self.refused:
            words.append(f"{len(self.refused)} left out")
        said = f"{verb} {', '.join(words)} from {self.source}."
        return f"Stopped part way: {said}" if self.cancelled else said[0].upper() + said[1:]

    def as_dict(self) -> dict[str, object]:
        """What ``san import --json`` prints: the counts, and each entry's outcome."""
        return {
            "kind": self.kind.value,
            "source": self.source,
            "dry_run": self.dry_run,
            "batch_id": self.batch_id,
            "new": self.imported,
            "updated": self.updated,
            "already_there": self.duplicates,
            "merged": self.merged,
            "left_out": len(self.refused),
            "cancelled": self.cancelled,
            "scrap_ids": list(self.scrap_ids),
            "items": [outcome.as_dict() for outcome in self.outcomes],
        }


@dataclass
class _Batch:
    """An import being stored: what came in so far, for its row in ``import_batches``."""

    id: str
    plan: ImportPlan
    refused: int
    duplicates: int = 0  # already in the library
    updated: int = 0
    stored: list[str] = field(default_factory=list)
    written: bool = False  # its row exists (with its first scrap or update)


class Importer:
    def __init__(
        self,
        db: Database,
        queue: JobStore,
        changelog: ChangeLog | None = None,
        max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
    ) -> None:
        self.db = db
        self.queue = queue
        self.changelog = changelog
        self.max_bytes = max_bytes

    # --- storing ------------------------------------------------------------------------------

    def store(
        self,
        plan: ImportPlan,
        *,
        dry_run: bool = False,
        cancelled: Callable[[], bool] = lambda: False,
        progress: Progress | None = None,
    ) -> ImportSummary:
        refused = list(plan.refused)
        outcomes = [ItemOutcome(one.source_ref, Outcome.LEFT_OUT, one.reason) for one in plan.refused]
        outcomes += [
            ItemOutcome(one.source_ref, Outcome.MERGED, f"into {one.into}: {one.reason}") for one in plan.merged
        ]
        merged = len(plan.merged)
        rows: list[Row] = []
        firsts: dict[object, str] = {}  # the first item of each content and each identity: what a second joins
        for item in plan.items:
            try:
                row = self._row(plan.kind, item)
            except RejectedContentError as exc:
                refused.append(Refusal(item.entry or item.source_ref, str(exc)))
                outcomes.append(ItemOutcome(item.entry or item.source_ref, Outcome.LEFT_OUT, str(exc), item.title))
                continue
            first = firsts.get(row.key) or (firsts.get(row.import_key) if row.import_key else None)
            if first is not None:
                merged += 1
                outcomes.append(ItemOutcome(row.source_ref, Outcome.MERGED, f"into {first}: listed twice", item.title))
                continue
            firsts[row.key] = row.source_ref
            if row.import_key:
                firsts[row.import_key] = row.source_ref
            rows.append(row)
        batch = None if dry_run else _Batch(new_id(), plan, refused=len(refused))
        counts = dict.fromkeys(Outcome, 0)
        stopped = False
        total = len(rows)
        for start in range(0, total, CHUNK):
            if cancelled():
                stopped = True
                break
            chunk = rows[start : start + CHUNK]
            if batch is None:
                with self.db.engine.connect() as conn:
                    matches = match(conn, chunk)
            else:
                matches = self._store_chunk(batch, chunk, last=start + CHUNK >= total)
            for found in matches:
                counts[found.outcome] += 1
                outcomes.append(found.item_outcome())
            if progress is not None:
                progress(min(start + CHUNK, total), total)
        summary = ImportSummary(
            kind=plan.kind,
            source=plan.source,
            batch_id=batch.id if batch is not None and batch.written else None,
            imported=counts[Outcome.NEW],
            duplicates=counts[Outcome.ALREADY_THERE],
            refused=tuple(refused),
            scrap_ids=tuple(batch.stored if batch is not None else ()),
            dry_run=dry_run,
            cancelled=stopped,
            updated=counts[Outcome.UPDATED],
            merged=merged,
            outcomes=tuple(outcomes),
        )
        log.info("Import of %s (%s): %s", plan.source, plan.kind.value, summary.sentence())
        return summary

    def _row(self, kind: ImportKind, item: ImportItem) -> Row:
        values: dict[str, object] = {
            "source_type": item.source_type,
            "title": " ".join((item.title or "").split())[:500] or None,
            "given_tags": _given_tags(item.tags),
            "created_at": item.captured_at or utcnow(),
            "import_key": f"{kind.value}:{item.identity}" if item.identity else None,
            "given_card": json.dumps(asdict(item.card), ensure_ascii=False) if item.card else None,
        }
        if item.source_type is SourceType.URL:
            try:
                address = normalize_url(item.content)
            except ValueError as exc:
                raise RejectedContentError(f"Not a web address: {item.content[:200]}") from exc
            check_capturable(address, self.max_bytes)
            values.update(content=address, source_ref=address, content_hash=content_hash(address))
            if values["title"] == address:
                values["title"] = None
        else:
            text = check_capturable(item.content, self.max_bytes)
            source = without_userinfo(item.source_ref) or None
            values.update(content=text, source_ref=source, content_hash=content_hash(text))
        return Row(values, item.entry or item.source_ref, item.warnings)

    def _store_chunk(self, batch: _Batch, chunk: Sequence[Row], *, last: bool) -> list[Match]:
        """Insert the chunk's new scraps with their jobs, give the scraps it updates their new text, and write the
        batch's counts so far (finished with the ``last`` chunk), in one transaction. The batch's row is written
        with its first scrap or update."""
        with self.db.write_connection() as conn:
            matches = match(conn, chunk)
            if not batch.written and any(found.outcome in (Outcome.NEW, Outcome.UPDATED) for found in matches):
                plan = batch.plan
                conn.execute(
                    sa.insert(import_batches).values(
                        id=batch.id, kind=plan.kind.value, source=plan.source, imported=0, duplicates=0, refused=0
                    )
                )
                batch.written = True
            fresh = {
                index: {**found.row.values, "id": new_id(), "import_batch_id": batch.id}
                for index, found in enumerate(matches)
                if found.outcome is Outcome.NEW
            }
            if fresh:
                try:
                    with conn.begin_nested():
                        conn.execute(sa.insert(scraps), list(fresh.values()))
                except IntegrityError:  # another process stored some of them meanwhile: one by one
                    fresh = {index: values for index, values in fresh.items() if self._insert_one(conn, values)}
            outcomes: list[Match] = []
            for index, found in enumerate(matches):
                if (found.outcome is Outcome.NEW and index not in fresh) or (
                    found.outcome is Outcome.UPDATED and not self._update_one(conn, found, batch.id)
                ):
                    found = replace(found, outcome=Outcome.ALREADY_THERE)
                elif found.adopt:
                    adopt(conn, found)
                outcomes.append(found)
            ids = [str(values["id"]) for values in fresh.values()]
            self.queue.enqueue_new(conn, [job for values in fresh.values() for job in _jobs_of(values)])
            updated = [found.scrap.id for found in outcomes if found.outcome is Outcome.UPDATED and found.scrap]
            if self.changelog is not None and (ids or updated):
                self.changelog.record(conn, SCRAP_NOTICE, ids + updated)
            batch.stored += ids
            batch.updated += len(updated)
            batch.duplicates += sum(found.outcome is Outcome.ALREADY_THERE for found in outcomes)
            if batch.written:
                counts: dict[str, object] = {
                    "imported": len(batch.stored),
                    "updated": batch.updated,
                    "duplicates": batch.duplicates,
                    "refused": batch.refused,
                }
                if last:
                    counts["finished_at"] = utcnow()
                conn.execute(sa.update(import_batches).where(import_batches.c.id == batch.id).values(counts))
        return outcomes

    @staticmethod
    def _insert_one(conn: sa.Connection, values: dict[str, object]) -> bool:
        try:
            with conn.begin_nested():
                conn.execute(sa.insert(scraps).values(values))
        except IntegrityError:
            return False
        return True

    def _update_one(self, conn: sa.Connection, found: Match, batch_id: str) -> bool:
        try:
            with conn.begin_nested():
                update(conn, self.queue, found, batch_id)
        except IntegrityError:  # its new text became another scrap's meanwhile
            return False
        return True


def _given_tags(tags: Sequence[str]) -> str | None:
    """The source's tags a card can hold (as a person could type them), as JSON; None without any."""
    kept: list[str] = []
    for tag in tags:
        name = " ".join(tag.strip().lstrip("#").split())
        if name and len(name) <= MAX_TAG_LENGTH and name.casefold() not in {k.casefold() for k in kept}:
            kept.append(name)
    return json.dumps(kept[:MAX_TAGS], ensure_ascii=False) if kept else None


def _jobs_of(scrap: dict[str, object]) -> list[tuple[JobType, str]]:
    """A new scrap's jobs, as capture asks for them: a link's page first, a text's card and refinement."""
    scrap_id = str(scrap["id"])
    if scrap["source_type"] is SourceType.URL:
        return [(JobType.PAGE_FETCH, scrap_id)]
    return [(JobType.CARD_ANALYSIS, scrap_id), (JobType.SCRAP_REFINE, scrap_id)]
