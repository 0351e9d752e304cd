"""Correcting a card by hand (issue 24): its title, summary, tags and category.

An edited field is marked as the person's (``knowledge_cards.<field>_edited``): analysing the card again
keeps it unless the person asked to replace it (``CardAnalysisPayload.replace_edits_as_of``). A new title or
summary asks for a new vector in the background (the re-embedding job of a new embedding model). A tag has
one spelling on every card: renaming it on one card can rename it on all (``rename_tags``), merging it into
a tag of the new name when there is one. Every edit can be undone while nothing else changed the cards
since (``CardEditService.undo``); the cards' last-change time goes back with it, so a day's TIL whose cards
are as they were says nothing changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import CardDraft
from san_desktop.core.enums import JobType
from san_desktop.core.timeutil import utcnow
from san_desktop.db.changes import CARD_NOTICE, ChangeLog
from san_desktop.db.database import Database
from san_desktop.db.models import AsyncJob, Category, KnowledgeCard, Scrap, Tag, card_tags
from san_desktop.queue.errors import DuplicateJobError
from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload, load_payload
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.card_fields import (
    CardEditError,
    category_named,
    clean_summary,
    clean_tag,
    clean_tags,
    clean_title,
)
from san_desktop.services.cards import (
    CARD_FIELDS,
    CardNotFoundError,
    CardSummary,
    live_cards,
    named_ids,
    set_card_tags,
)
from san_desktop.services.changes import Changes

REEMBED = dump_payload(CardAnalysisPayload(embed_only=True))


@dataclass(frozen=True)
class CardEdit:
    """What to change on a card; ``None`` leaves a field as it is. ``rename_tags``: (old, new) pairs to
    rename on every card that has the old tag."""

    title: str | None = None
    summary: str | None = None
    tags: tuple[str, ...] | None = None
    category: str | None = None
    rename_tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CardState:
    """A card as it was, for Undo (its marks and its last-change time too)."""

    card_id: str
    scrap_id: str
    title: str
    summary: str
    tags: tuple[str, ...]
    category: str | None
    edited: tuple[str, ...]
    updated_at: datetime


@dataclass(frozen=True)
class CardEditResult:
    """What an edit (or a tag rename, or an undo) did. ``card``: the card edited, as it is now (None for a
    rename alone); ``changed``: its fields whose value changed; ``before``: every card changed, as it was;
    ``stamp``: their new last-change time (None after an undo, which cannot be undone); ``jobs``: new
    vectors asked for."""

    card: CardSummary | None
    changed: tuple[str, ...]
    before: tuple[CardState, ...]
    stamp: datetime | None
    jobs: tuple[JobRecord, ...] = ()

    @property
    def scrap_ids(self) -> frozenset[str]:
        return frozenset(state.scrap_id for state in self.before)

    @property
    def changes(self) -> Changes:
        """The cards changed (their scraps' rows and cards) and the new vectors asked for."""
        return Changes(scraps=self.scrap_ids, cards_of_scraps=self.scrap_ids, jobs=self.jobs)

    @property
    def others(self) -> int:
        """Cards changed besides the one edited (a tag renamed on them)."""
        own = self.card.id if self.card is not None else None
        return sum(1 for state in self.before if state.card_id != own)


@dataclass(frozen=True)
class KeptEdits:
    """The values of a scrap's card that a person edited (``None``: not edited, or no card yet), and when
    the card last changed."""

    title: str | None = None
    summary: str | None = None
    tags: tuple[str, ...] | None = None
    category: str | None = None
    updated_at: datetime | None = None

    def over(self, draft: CardDraft) -> CardDraft:
        """``draft`` with the edited fields in place of the analysis's."""
        return CardDraft(
            self.title if self.title is not None else draft.title,
            self.summary if self.summary is not None else draft.summary,
            self.tags if self.tags is not None else draft.tags,
            self.category if self.category is not None else draft.category,
        )

    def given_fields(self) -> tuple[str, ...]:
        """The fields these values are given for (of a scrap without a card: what its source gave)."""
        values = {"title": self.title, "summary": self.summary, "tags": self.tags, "category": self.category}
        return tuple(field for field in CARD_FIELDS if values[field] is not None)

    def replaced_by(self, payload: CardAnalysisPayload) -> bool:
        """Whether an analysis with ``payload`` replaces these edits (asked for while they were as now)."""
        return (
            payload.replace_edits_as_of is not None
            and self.updated_at is not None
            and self.updated_at.isoformat() == payload.replace_edits_as_of
        )


# --- cards as stored ------------------------------------------------------------------------------------

_EDITED_FLAGS = (
    KnowledgeCard.title_edited,
    KnowledgeCard.summary_edited,
    KnowledgeCard.tags_edited,
    KnowledgeCard.category_edited,
)
_STATES = (
    sa.select(
        KnowledgeCard.id,
        KnowledgeCard.scrap_id,
        KnowledgeCard.title,
        KnowledgeCard.summary,
        Category.name,
        KnowledgeCard.updated_at,
        *_EDITED_FLAGS,
    )
    .outerjoin(Category, Category.id == KnowledgeCard.category_id)
    .where(KnowledgeCard.id.in_(sa.bindparam("ids", expanding=True)))
)
_TAGS_OF = (
    sa.select(card_tags.c.card_id, Tag.name)
    .join(Tag, Tag.id == card_tags.c.tag_id)
    .where(card_tags.c.card_id.in_(sa.bindparam("ids", expanding=True)))
)


def _states(conn: sa.Connection, card_ids: Sequence[str]) -> dict[str, CardState]:
    """The cards of ``card_ids`` as stored, deleted scraps' cards too."""
    if not card_ids:
        return {}
    tags: dict[str, list[str]] = {card_id: [] for card_id in card_ids}
    for card_id, name in conn.execute(_TAGS_OF, {"ids": list(card_ids)}):
        tags[card_id].append(name)
    return {
        card_id: CardState(
            card_id=card_id,
            scrap_id=scrap_id,
            title=title,
            summary=summary,
            tags=tuple(sorted(tags[card_id], key=str.casefold)),
            category=category,
            edited=tuple(field for field, flag in zip(CARD_FIELDS, flags, strict=True) if flag),
            updated_at=updated_at,
        )
        for card_id, scrap_id, title, summary, category, updated_at, *flags in conn.execute(
            _STATES, {"ids": list(card_ids)}
        )
    }


def _live_state(conn: sa.Connection, card_id: str) -> CardState:
    if not live_cards(conn, [card_id]):
        raise CardNotFoundError(card_id)
    return _states(conn, [card_id])[card_id]


def kept_edits(conn: sa.Connection, scrap_id: str) -> KeptEdits:
    """What a person edited on the scrap's card; when it has no card yet, what its source gave it (an imported
    note's tags, an exported card's title, summary and category) counts as theirs: the first card takes them and
    keeps them as edited."""
    card_id = conn.scalar(sa.select(KnowledgeCard.id).where(KnowledgeCard.scrap_id == scrap_id))
    if card_id is None:
        row = conn.execute(sa.select(Scrap.given_tags, Scrap.given_card).where(Scrap.id == scrap_id)).first()
        if row is None:
            return KeptEdits()
        card = json.loads(row.given_card) if row.given_card else {}
        return KeptEdits(
            title=card.get("title") or None,
            summary=card.get("summary") or None,
            tags=tuple(json.loads(row.given_tags)) if row.given_tags else None,
            category=card.get("category") or None,
        )
    state = _states(conn, [card_id])[card_id]
    edited = set(state.edited)
    return KeptEdits(
        title=state.title if "title" in edited else None,
        summary=state.summary if "summary" in edited else None,
        tags=state.tags if "tags" in edited else None,
        category=state.category if "category" in edited and state.category else None,
        updated_at=state.updated_at,
    )


def _write(conn: sa.Connection, card_id: str, values: dict[str, object]) -> None:
    conn.execute(sa.update(KnowledgeCard).where(KnowledgeCard.id == card_id).values(**values))


def _tag_row(conn: sa.Connection, name: str) -> tuple[str, str] | None:
    """(id, spelling) of the tag called ``name``, ignoring case."""
    row = conn.execute(sa.select(Tag.id, Tag.name).where(Tag.name_key == name.casefold())).first()
    return (row.id, row.name) if row is not None else None


def _cards_with_tag(conn: sa.Connection, tag_id: str) -> list[str]:
    return list(conn.scalars(sa.select(card_tags.c.card_id).where(card_tags.c.tag_id == tag_id)))


_LIVE_CARDS_WITH_TAG = (
    sa.select(card_tags.c.tag_id, sa.func.count())
    .join(KnowledgeCard, KnowledgeCard.id == card_tags.c.card_id)
    .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
    .where(Scrap.deleted_at.is_(None))
    .group_by(card_tags.c.tag_id)
)


class CardEditService:
    """Edits, tag renames, Undo and "Analyse again"; the window and the command line both come here.
    Each is one write transaction; other processes learn of it through change notices."""

    def __init__(self, db: Database, queue: JobStore, changelog: ChangeLog | None = None) -> None:
        self.db = db
        self.queue = queue
        self.changelog = changelog

    # --- edits -----------------------------------------------------------------------------------------

    def edit(self, card_id: str, edit: CardEdit) -> CardEditResult:
        """Change the given fields of a live card (each checked first, with a sentence saying what is wrong)
        and mark those that changed as the person's; rename tags on every card as asked."""
        wanted: dict[str, object] = {}
        if edit.title is not None:
            wanted["title"] = clean_title(edit.title)
        if edit.summary is not None:
            wanted["summary"] = clean_summary(edit.summary)
        if edit.tags is not None:
            wanted["tags"] = clean_tags(edit.tags)
        if edit.category is not None:
            wanted["category"] = category_named(edit.category)
        renames = [(clean_tag(old), clean_tag(new)) for old, new in edit.rename_tags]
        if not wanted and not renames:
            raise CardEditError("Nothing to change: give a new title, summary, tags or category.")
        with self.db.write() as session:
            conn = session.connection()
            now = utcnow()
            before = _live_state(conn, card_id)
            others: dict[str, CardState] = {}
            for old, new in renames:
                for state in self._rename(conn, old, new, now, exclude=card_id):
                    others.setdefault(state.card_id, state)
            changed = self._apply(conn, before, wanted, now)
            touched = ([before] if changed else []) + list(others.values())
            jobs = self._reembed(session, [before.scrap_id]) if {"title", "summary"} & set(changed) else ()
            self._notice(session, [state.scrap_id for state in touched])
            (card,) = live_cards(conn, [card_id])
        return CardEditResult(card, changed, tuple(touched), now if touched else None, jobs)

    def rename_tag(self, old: str, new: str) -> CardEditResult:
        """Rename a tag on every card that has it (merged into the tag called ``new`` if there is one)."""
        old, new = clean_tag(old), clean_tag(new)
        with self.db.write() as session:
            conn = session.connection()
            now = utcnow()
            touched = self._rename(conn, old, new, now, exclude=None)
            self._notice(session, [state.scrap_id for state in touched])
        return CardEditResult(None, (), tuple(touched), now if touched else None)

    def _apply(
        self, conn: sa.Connection, before: CardState, wanted: dict[str, object], now: datetime
    ) -> tuple[str, ...]:
        """Write the wanted values that differ from the card's as it was ``before`` (a rename may have
        changed its tags since), marked as the person's; the fields changed, in ``CARD_FIELDS`` order."""
        values: dict[str, object] = {}
        changed: set[str] = set()
        for field in ("title", "summary"):
            if field in wanted and wanted[field] != getattr(before, field):
                values[field] = wanted[field]
                changed.add(field)
        category = wanted.get("category")
        if isinstance(category, str) and category.casefold() != (before.category or "").casefold():
            values["category_id"] = named_ids(conn, Category, [category], now)[0]
            changed.add("category")
        tags = wanted.get("tags")
        if isinstance(tags, tuple):
            set_card_tags(conn, before.card_id, named_ids(conn, Tag, tags, now))  # a known tag keeps its spelling
        if _states(conn, [before.card_id])[before.card_id].tags != before.tags:
            changed.add("tags")  # edited, or renamed by this edit
        if changed:
            values.update({f"{field}_edited": True for field in changed}, updated_at=now)
            _write(conn, before.card_id, values)
        return tuple(field for field in CARD_FIELDS if field in changed)

    def _rename(
        self, conn: sa.Connection, old: str, new: str, now: datetime, *, exclude: str | None
    ) -> list[CardState]:
        """Rename the tag ``old`` to ``new`` on every card; the cards changed (but ``exclude``), as they were.
        Another spelling of the same name is a respelling of the one tag; another name merges the tag into
        the tag of that name (made if missing), and the old one goes. The cards' tags are then the person's."""
        found = _tag_row(conn, old)
        if found is None:
            raise CardEditError(f"There is no tag “{old}”.")
        old_id, spelling = found
        cards = _cards_with_tag(conn, old_id)
        states = [state for card_id, state in _states(conn, cards).items() if card_id != exclude]
        if old.casefold() == new.casefold():
            if spelling == new:
                return []
            conn.execute(sa.update(Tag).where(Tag.id == old_id).values(name=new))
            for card_id in cards:
                _write(conn, card_id, {"updated_at": now})  # the day's TIL shows the tag's spelling
            return states
        (new_id,) = named_ids(conn, Tag, [new], now)
        having_new = set(_cards_with_tag(conn, new_id))
        conn.execute(sa.delete(card_tags).where(card_tags.c.tag_id == old_id))
        missing = [{"card_id": card_id, "tag_id": new_id} for card_id in cards if card_id not in having_new]
        if missing:
            conn.execute(sa.insert(card_tags), missing)
        conn.execute(sa.delete(Tag).where(Tag.id == old_id))
        for state in states:
            _write(conn, state.card_id, {"tags_edited": True, "updated_at": now})
        return states

    # --- undo ------------------------------------------------------------------------------------------

    def undo(self, result: CardEditResult) -> CardEditResult:
        """Put the cards ``result`` changed back as they were (values, marks, last-change time), unless
        something changed one of them since."""
        if result.stamp is None or not result.before:
            raise CardEditError("There is nothing to undo.")
        with self.db.write() as session:
            conn = session.connection()
            now_states = _states(conn, [state.card_id for state in result.before])
            for state in result.before:
                current = now_states.get(state.card_id)
                if current is None:
                    raise CardNotFoundError(state.card_id)
                if current.updated_at != result.stamp:
                    raise CardEditError(
                        f"“{current.title}” changed since that edit (edited or analysed again): nothing was undone."
                    )
            now = utcnow()
            for state in result.before:
                self._restore(conn, state, now)
            words_back = [
                state.scrap_id
                for state in result.before
                if (state.title, state.summary) != (now_states[state.card_id].title, now_states[state.card_id].summary)
            ]
            jobs = self._reembed(session, words_back)
            self._notice(session, [state.scrap_id for state in result.before])
            card = live_cards(conn, [result.card.id]) if result.card is not None else []
        changed = result.changed
        return CardEditResult(card[0] if card else None, changed, tuple(now_states.values()), None, jobs)

    @staticmethod
    def _restore(conn: sa.Connection, state: CardState, now: datetime) -> None:
        tag_ids = named_ids(conn, Tag, state.tags, now)
        for tag_id, name in zip(tag_ids, state.tags, strict=True):  # a respelled tag gets its spelling back
            conn.execute(sa.update(Tag).where(Tag.id == tag_id, Tag.name != name).values(name=name))
        set_card_tags(conn, state.card_id, tag_ids)
        category_id = named_ids(conn, Category, [state.category], now)[0] if state.category else None
        values: dict[str, object] = {
            "title": state.title,
            "summary": state.summary,
            "category_id": category_id,
            "updated_at": state.updated_at,
        }
        values.update({f"{field}_edited": field in state.edited for field in CARD_FIELDS})
        _write(conn, state.card_id, values)

    # --- analysing again -------------------------------------------------------------------------------

    def analyse_again(self, card_id: str, *, replace_edits: bool) -> JobRecord:
        """Ask for the card's analysis again (its source text, the configured provider). The fields the
        person edited are kept unless ``replace_edits`` (then as they are now: a later edit is kept)."""
        with self.db.write() as session:
            conn = session.connection()
            state = _live_state(conn, card_id)
            active = self.queue.active_job_id(session, JobType.CARD_ANALYSIS, state.scrap_id)
            if active is not None:
                waiting = session.scalar(sa.select(AsyncJob.payload).where(AsyncJob.id == active))
                if load_payload(CardAnalysisPayload, waiting).embed_only:
                    raise CardEditError(
                        f"The card is getting a new vector for its new words (job {active}): analyse it again "
                        "once that is done, in a moment."
                    )
                raise CardEditError(f"The card is already waiting for its analysis (job {active}).")
            payload = None
            if replace_edits and state.edited:
                payload = dump_payload(CardAnalysisPayload(replace_edits_as_of=state.updated_at.isoformat()))
            job = self.queue.enqueue(JobType.CARD_ANALYSIS, state.scrap_id, session=session, payload=payload)
            self._notice(session, [state.scrap_id])
        return job

    # --- reading ---------------------------------------------------------------------------------------

    def tag_usage(self, card_id: str) -> dict[str, int]:
        """How many other live cards have each tag of this card (what renaming it everywhere would change)."""
        with self.db.engine.connect() as conn:
            state = _live_state(conn, card_id)
            counts: dict[str, int] = {tag_id: int(count) for tag_id, count in conn.execute(_LIVE_CARDS_WITH_TAG)}
            own = sa.select(Tag.id, Tag.name).join(card_tags, card_tags.c.tag_id == Tag.id)
            ids = {name: tag_id for tag_id, name in conn.execute(own.where(card_tags.c.card_id == card_id))}
        return {name: max(0, counts.get(ids[name], 0) - 1) for name in state.tags}  # itself not counted

    def tag_names(self) -> list[str]:
        """Every tag some live card has, for completing what a person types."""
        with self.db.engine.connect() as conn:
            used = {tag_id for tag_id, _count in conn.execute(_LIVE_CARDS_WITH_TAG)}
            names = [name for tag_id, name in conn.execute(sa.select(Tag.id, Tag.name)) if tag_id in used]
        return sorted(names, key=str.casefold)

    # --- helpers ---------------------------------------------------------------------------------------

    def _reembed(self, session: Session, scrap_ids: Sequence[str]) -> tuple[JobRecord, ...]:
        """A new vector for each card, in the background. A card whose analysis waits or runs already gets
        none: a waiting one reads the new words; a running one sees them when it saves, and asks again."""
        jobs = []
        for scrap_id in scrap_ids:
            with suppress(DuplicateJobError):
                jobs.append(self.queue.enqueue(JobType.CARD_ANALYSIS, scrap_id, session=session, payload=REEMBED))
        return tuple(jobs)

    def _notice(self, session: Session, scrap_ids: Iterable[str]) -> None:
        if self.changelog is not None and (ids := sorted(set(scrap_ids))):
            self.changelog.record(session, CARD_NOTICE, ids)
