"""Knowledge cards: saving an analysis (idempotently), reading cards, and finding similar ones."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import CardDraft
from san_desktop.ai.calibration import score_of, threshold_of
from san_desktop.core.errors import SanError
from san_desktop.core.ids import new_id
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.base import backend_of
from san_desktop.db.database import Database
from san_desktop.db.models import CardEmbedding, Category, KnowledgeCard, Scrap, Tag, card_tags
from san_desktop.db.vectors import from_stored, index_card_vector, nearest, to_stored, unindex_card, warm_up
from san_desktop.services.search import QueryEmbedder, QueryVector, live_in_space, search_cards, search_tils
from san_desktop.services.til_index import TilSummary, summaries_of

SIMILAR_LIMIT = 10
# when no card is within the threshold, only this many nearest ones are offered (labelled as such)
FALLBACK_NEAREST = 3
# the best of the index's ranking checked for being live (a deleted card drops out, the next one shows)
NEAREST_CHECKED = 50


class CardNotFoundError(SanError):
    exit_code = 5

    def __init__(self, card_id: str) -> None:
        super().__init__(f"There is no card with id {card_id}.")


# a card's fields a person can correct, in the order they are shown
CARD_FIELDS = ("title", "summary", "tags", "category")


@dataclass(frozen=True)
class CardSummary:
    id: str
    scrap_id: str
    title: str
    summary: str
    category: str | None
    tags: tuple[str, ...]
    created_at: datetime
    edited: tuple[str, ...] = ()  # the fields a person corrected (of ``CARD_FIELDS``, in its order)


@dataclass(frozen=True)
class CardDetail:
    card: CardSummary
    content: str
    refined_content: str | None
    raw_content: str | None
    source_type: str
    source_ref: str | None
    embedding_model: str | None


@dataclass(frozen=True)
class SimilarCard:
    card: CardSummary
    distance: float  # cosine distance: 0 same direction, 1 unrelated, 2 opposite
    within_threshold: bool  # False: nothing is close, this is one of the nearest few
    model_id: str = ""  # the vector space compared in

    @property
    def score(self) -> float:
        """Between 0 and 1, as people are shown it: the chance that a card this near is on the same
        topic, calibrated per embedding model (``ai.calibration``), so 60% means the same whichever."""
        return score_of(self.model_id, self.distance)


NamedT = TypeVar("NamedT", Category, Tag)

# The statements of saving a card, built once: building a statement cost five times executing it.
_NAMED_IDS: dict[type[Category | Tag], Any] = {
    model: sa.select(model.name_key, model.id).where(model.name_key.in_(sa.bindparam("keys", expanding=True)))
    for model in (Category, Tag)
}
_ADD_NAMED: dict[type[Category | Tag], Any] = {model: sa.insert(model) for model in (Category, Tag)}
_EDITED_COLUMNS = (
    KnowledgeCard.title_edited,
    KnowledgeCard.summary_edited,
    KnowledgeCard.tags_edited,
    KnowledgeCard.category_edited,
)
_CARD_OF_SCRAP = sa.select(KnowledgeCard.id, *_EDITED_COLUMNS).where(KnowledgeCard.scrap_id == sa.bindparam("scrap"))
_ADD_CARD = sa.insert(KnowledgeCard)
_CHANGE_CARD = sa.update(KnowledgeCard).where(KnowledgeCard.id == sa.bindparam("card"))
_LINK_TAGS = sa.insert(card_tags)
_TAGS_OF_CARD = sa.select(card_tags.c.tag_id).where(card_tags.c.card_id == sa.bindparam("card"))
_UNLINK_TAGS = sa.delete(card_tags).where(
    card_tags.c.card_id == sa.bindparam("card"), card_tags.c.tag_id.in_(sa.bindparam("tags", expanding=True))
)
_VECTOR_OF_CARD = sa.select(CardEmbedding.model_id, CardEmbedding.dim).where(
    CardEmbedding.card_id == sa.bindparam("card")
)
_DROP_VECTOR = sa.delete(CardEmbedding).where(CardEmbedding.card_id == sa.bindparam("card"))
# a new vector is not a change of what the card says: ``updated_at`` (a day's TIL inputs) stays
_SET_EMBEDDING_MODEL = (
    sa.update(KnowledgeCard)
    .where(KnowledgeCard.id == sa.bindparam("card"))
    .values(embedding_model=sa.bindparam("model"), updated_at=KnowledgeCard.updated_at)
)
_ADD_VECTOR = sa.insert(CardEmbedding)


def named_ids(conn: sa.Connection, model: type[NamedT], names: Sequence[str], now: datetime) -> list[str]:
    """Ids of ``names`` by case-insensitive name (the unique ``name_key``), created when missing: one
    SELECT for all and one INSERT for the missing; one id per distinct key, in the order given, the first
    spelling kept for a new row."""
    first: dict[str, str] = {}
    for name in names:
        first.setdefault(name.casefold(), name)
    if not first:
        return []
    rows = conn.execute(_NAMED_IDS[model], {"keys": list(first)})
    found: dict[str, str] = {str(key): str(ident) for key, ident in rows}
    missing = {key: new_id() for key in first if key not in found}
    if missing:
        try:
            with conn.begin_nested():
                # in one order whoever adds them: two machines adding the same new names in other orders would
                # each wait for the other's (a deadlock on a server)
                rows_to_add = [
                    {"id": ident, "name": first[key], "name_key": key, "created_at": now}
                    for key, ident in sorted(missing.items())
                ]
                conn.execute(_ADD_NAMED[model], rows_to_add)
        except sa.exc.IntegrityError:  # created meanwhile by another writer: read theirs
            return named_ids(conn, model, names, now)
        found.update(missing)
    return [found[key] for key in first]


def save_card(
    session: Session,
    scrap_id: str,
    draft: CardDraft,
    model_id: str,
    vector: npt.NDArray[np.float32],
    *,
    replace_edits: bool = False,
    given: Collection[str] = (),
) -> str:
    """Create or update the scrap's card (one per scrap, however often analysis runs) with its vector.
    The fields a person edited keep their values unless ``replace_edits`` (the person said so), which
    also forgets that they were edited. ``given``: the fields (of ``CARD_FIELDS``) whose draft values are the ones
    the scrap's source gave (an imported note's tags, an exported card's title); a new card keeps them as edited.

    Plain SQL statements rather than ORM objects: this runs once per card inside the job's publishing
    transaction, and the unit of work cost three times the SQL."""
    conn = session.connection()
    now = utcnow()
    existing = conn.execute(_CARD_OF_SCRAP, {"scrap": scrap_id}).first()
    edited = dict.fromkeys(CARD_FIELDS, False)
    if existing is not None and not replace_edits:
        edited = dict(zip(CARD_FIELDS, (bool(flag) for flag in existing[1:]), strict=True))
    values: dict[str, object] = {"embedding_model": model_id, "updated_at": now}
    if not edited["title"]:
        values["title"] = draft.title
    if not edited["summary"]:
        values["summary"] = draft.summary
    if not edited["category"]:
        values["category_id"] = named_ids(conn, Category, [draft.category], now)[0]
    if replace_edits:
        values.update({f"{field}_edited": False for field in CARD_FIELDS})
    tag_ids = [] if edited["tags"] else named_ids(conn, Tag, draft.tags, now)
    if existing is None:
        values.update({f"{field}_edited": True for field in given})
        card_id = new_id()
        card_row = {"id": card_id, "scrap_id": scrap_id, "created_at": now, **values}
        if backend_of(conn).defer_foreign_keys(conn):
            # Tags first, then the card (foreign keys checked at commit): the search index's insert trigger
            # then reads the tags once, instead of a tag trigger rewriting the card's whole index entry
            # (an FTS5 update is a delete and an insert) once per tag.
            _link_tags(conn, card_id, tag_ids)
            conn.execute(_ADD_CARD, card_row)
        else:
            conn.execute(_ADD_CARD, card_row)
            _link_tags(conn, card_id, tag_ids)
        _store_vector(conn, card_id, model_id, vector, now, replace=False)
        return card_id
    card_id = existing[0]
    conn.execute(_CHANGE_CARD, {"card": card_id, **values})
    if not edited["tags"]:
        set_card_tags(conn, card_id, tag_ids)
    _store_vector(conn, card_id, model_id, vector, now, replace=True)
    return str(card_id)


def set_card_tags(conn: sa.Connection, card_id: str, tag_ids: Sequence[str]) -> None:
    """Link exactly ``tag_ids`` to the card (unlinking the others, linking the missing)."""
    linked = set(conn.scalars(_TAGS_OF_CARD, {"card": card_id}))
    if removed := linked - set(tag_ids):
        conn.execute(_UNLINK_TAGS, {"card": card_id, "tags": sorted(removed)})
    _link_tags(conn, card_id, [tag for tag in tag_ids if tag not in linked])


def _link_tags(conn: sa.Connection, card_id: str, tag_ids: Sequence[str]) -> None:
    if tag_ids:
        conn.execute(_LINK_TAGS, [{"card_id": card_id, "tag_id": tag_id} for tag_id in tag_ids])


def save_embedding(session: Session, card_id: str, model_id: str, vector: npt.NDArray[np.float32]) -> None:
    """Replace the card's vector (the embedding model changed, or the card was edited)."""
    conn = session.connection()
    conn.execute(_SET_EMBEDDING_MODEL, {"card": card_id, "model": model_id})
    _store_vector(conn, card_id, model_id, vector, utcnow(), replace=True)


def mark_embedding_stale(conn: sa.Connection, card_id: str) -> None:
    """The card's vector was made from other words than it has now: the recovery sweep's re-embedding
    (``stale_embedding_hook``) takes it up, should the job asked for at once never run."""
    conn.execute(_SET_EMBEDDING_MODEL, {"card": card_id, "model": None})


def _store_vector(
    conn: sa.Connection, card_id: str, model_id: str, vector: npt.NDArray[np.float32], now: datetime, *, replace: bool
) -> None:
    if replace:
        old = conn.execute(_VECTOR_OF_CARD, {"card": card_id}).first()
        if old is not None:
            unindex_card(conn, card_id, old.model_id, old.dim)
            conn.execute(_DROP_VECTOR, {"card": card_id})
    conn.execute(
        _ADD_VECTOR,
        {
            "card_id": card_id,
            "model_id": model_id,
            "dim": int(vector.shape[0]),
            "vector": to_stored(vector),
            "created_at": now,
        },
    )
    index_card_vector(conn, card_id, model_id, vector, new=not replace)


# what ``_live_summaries`` selects
SummaryQuery = sa.Select[str, str, str, str, str, datetime, bool, bool, bool, bool]


def _live_summaries() -> SummaryQuery:
    """The columns of ``CardSummary`` of live cards (tags come from ``_summaries``): plain rows, which a
    page of 200 cards loads in a third of the time ORM objects with their relationships took."""
    return (
        sa.select(
            KnowledgeCard.id,
            KnowledgeCard.scrap_id,
            KnowledgeCard.title,
            KnowledgeCard.summary,
            Category.name,
            KnowledgeCard.created_at,
            KnowledgeCard.title_edited,
            KnowledgeCard.summary_edited,
            KnowledgeCard.tags_edited,
            KnowledgeCard.category_edited,
        )
        .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
        .outerjoin(Category, Category.id == KnowledgeCard.category_id)
        .where(Scrap.deleted_at.is_(None))
    )


# built once (building a statement cost more than running it): the live cards of some ids, their tags
_LIVE_SUMMARIES_OF = _live_summaries().where(KnowledgeCard.id.in_(sa.bindparam("ids", expanding=True)))
_TAG_NAMES_OF = (
    sa.select(card_tags.c.card_id, Tag.name)
    .join(Tag, Tag.id == card_tags.c.tag_id)
    .where(card_tags.c.card_id.in_(sa.bindparam("ids", expanding=True)))
)
_SOURCE_OF = (
    sa.select(
        Scrap.content,
        Scrap.refined_content,
        Scrap.raw_content,
        Scrap.source_type,
        Scrap.source_ref,
        KnowledgeCard.embedding_model,
    )
    .join(KnowledgeCard, KnowledgeCard.scrap_id == Scrap.id)
    .where(KnowledgeCard.id == sa.bindparam("card"))
)
_VECTOR_OF = sa.select(CardEmbedding.model_id, CardEmbedding.dim, CardEmbedding.vector).where(
    CardEmbedding.card_id == sa.bindparam("card")
)


def live_cards(conn: sa.Connection, card_ids: Sequence[str]) -> list[CardSummary]:
    """The live cards among ``card_ids`` (in no particular order)."""
    return _summaries(conn, _LIVE_SUMMARIES_OF, ids=list(card_ids))


def _summaries(conn: sa.Connection, query: SummaryQuery, **params: object) -> list[CardSummary]:
    # (the category column is None for a card without one)
    rows = conn.execute(query, params).all()
    tags: dict[str, list[str]] = {row[0]: [] for row in rows}
    if rows:
        for card_id, name in conn.execute(_TAG_NAMES_OF, {"ids": list(tags)}):
            tags[card_id].append(name)
    return [
        CardSummary(
            id=card_id,
            scrap_id=scrap_id,
            title=title,
            summary=summary,
            category=category,
            tags=tuple(sorted(tags[card_id], key=str.casefold)),
            created_at=created_at,
            edited=tuple(field for field, flag in zip(CARD_FIELDS, flags, strict=True) if flag),
        )
        for card_id, scrap_id, title, summary, category, created_at, *flags in rows
    ]


@dataclass(frozen=True)
class FoundCard:
    card: CardSummary
    matched: tuple[str, ...]  # where: search.IN_CARD, IN_TEXT, BY_MEANING


@dataclass(frozen=True)
class FoundTil:
    til: TilSummary
    matched: tuple[str, ...]  # where: search.IN_TIL, BY_MEANING


class CardService:
    """Reading, searching and finding similar cards; the window and the command line both come through
    here. "Similar" is within the calibrated distance of the card's own embedding model
    (``ai.calibration``); search is ``services.search`` with ``embed_query`` for meaning."""

    def __init__(self, db: Database, embed_query: QueryEmbedder | None = None) -> None:
        self.db = db
        self._embed_query = embed_query
        self._queries: dict[str, QueryVector | None] = {}  # the last few searches' vectors
        self._queries_lock = threading.Lock()

    def _query_vector(self, search: str) -> QueryVector | None:
        """The search's vector (the window reads on two threads: the cache is guarded, not the encoding)."""
        if self._embed_query is None:
            return None
        with self._queries_lock:
            if search in self._queries:
                return self._queries[search]
        vector = self._embed_query(search)
        with self._queries_lock:
            while len(self._queries) >= 8:
                self._queries.pop(next(iter(self._queries)))
            self._queries[search] = vector
        return vector

    def search(self, search: str, *, limit: int = 200) -> list[FoundCard]:
        """Cards found by the words of their card or scrap, or by meaning, best first, with where."""
        if not search.strip():
            return []
        query = self._query_vector(search.strip())
        with self.db.sessions() as session:
            hits = search_cards(session, search, query, limit=limit)
            found = {
                card.id: card
                for card in _summaries(session.connection(), _LIVE_SUMMARIES_OF, ids=[hit.card_id for hit in hits])
            }
        return [FoundCard(found[hit.card_id], hit.matched) for hit in hits if hit.card_id in found]

    def search_tils(self, search: str, *, limit: int = 20) -> list[FoundTil]:
        """The days whose TIL note ``search`` finds by its words or by meaning, best first, with where."""
        if not search.strip():
            return []
        query = self._query_vector(search.strip())
        with self.db.sessions() as session:
            hits = search_tils(session, search, query, limit=limit)
            found = summaries_of(session, [hit.summary_id for hit in hits])
        return [FoundTil(found[hit.summary_id], hit.matched) for hit in hits if hit.summary_id in found]

    def list_cards(self, search: str = "", *, limit: int = 200, before_id: str | None = None) -> list[CardSummary]:
        """Newest first, in pages before ``before_id``. With ``search``: ``search``'s results, best first,
        all in the first page."""
        if search.strip():
            return [] if before_id else [item.card for item in self.search(search, limit=limit)]
        with self.db.sessions() as session:
            query = _live_summaries().order_by(KnowledgeCard.id.desc()).limit(limit)
            if before_id:
                query = query.where(KnowledgeCard.id < before_id)
            return _summaries(session.connection(), query)

    def count_cards(self) -> int:
        """How many live cards there are (what ``list_cards`` pages through without a search)."""
        with self.db.sessions() as session:
            live = (
                sa.select(sa.func.count())
                .select_from(KnowledgeCard)
                .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
                .where(Scrap.deleted_at.is_(None))
            )
            return int(session.scalar(live) or 0)

    def cards_of_scraps(self, scrap_ids: Iterable[str], search: str = "") -> dict[str, CardSummary]:
        """The live cards of these scraps that ``search`` finds, by scrap id (a deleted scrap has none)."""
        scrap_ids = list(scrap_ids)
        if not scrap_ids:
            return {}
        query = _live_summaries().where(KnowledgeCard.scrap_id.in_(scrap_ids))
        with self.db.sessions() as session:
            if search.strip():
                hits = search_cards(
                    session, search, self._query_vector(search.strip()), limit=len(scrap_ids), scrap_ids=scrap_ids
                )
                query = query.where(KnowledgeCard.id.in_([hit.card_id for hit in hits]))
            return {card.scrap_id: card for card in _summaries(session.connection(), query)}

    def get(self, card_id: str) -> CardDetail:
        with self.db.engine.connect() as conn:
            found = _summaries(conn, _LIVE_SUMMARIES_OF, ids=[card_id])
            if not found:
                raise CardNotFoundError(card_id)
            row = conn.execute(_SOURCE_OF, {"card": card_id}).one()
        return CardDetail(
            card=found[0],
            content=row.content,
            refined_content=row.refined_content,
            raw_content=row.raw_content,
            source_type=row.source_type.value,
            source_ref=row.source_ref,
            embedding_model=row.embedding_model,
        )

    def card_id_for_scrap(self, scrap_id: str) -> str | None:
        with self.db.sessions() as session:
            return session.scalar(sa.select(KnowledgeCard.id).where(KnowledgeCard.scrap_id == scrap_id))

    def similar(self, card_id: str, *, limit: int = SIMILAR_LIMIT) -> list[SimilarCard]:
        """Cards nearest to ``card_id`` within the embedding model's threshold (cosine distance), itself
        excluded; when none pass, the ``FALLBACK_NEAREST`` nearest, marked so. Only vectors of the
        card's own embedding model are compared. The window and ``san cards similar`` both ask this."""
        return similar_cards(self.db, card_id, limit=limit)

    def warm_up(self, model_id: str) -> int:
        """Load the similar-card index of ``model_id`` into memory and ask it once (start-up, off the GUI
        thread), so that the first question a user asks finds the statements compiled and the pages
        read: without the question the first one took three times as long as later ones."""
        with self.db.engine.connect() as conn:
            loaded = warm_up(conn, model_id)
            some_card = conn.scalar(sa.select(CardEmbedding.card_id).where(CardEmbedding.model_id == model_id).limit(1))
        if some_card is not None:
            self.similar(some_card)
        return loaded


def similar_cards(
    db: Database, card_id: str, threshold: float | None = None, *, limit: int = SIMILAR_LIMIT
) -> list[SimilarCard]:
    """``CardService.similar``; ``threshold`` (a cosine distance) instead of the model's calibrated one."""
    with db.sessions() as session:
        own = session.connection().execute(_VECTOR_OF, {"card": card_id}).first()
        if own is None:
            if session.get(KnowledgeCard, card_id) is None:
                raise CardNotFoundError(card_id)
            return []
        within = threshold_of(own.model_id) if threshold is None else threshold
        return nearest_cards(session, own.model_id, from_stored(own.vector, own.dim), within, {card_id}, limit)


def nearest_cards(
    session: Session,
    model_id: str,
    vector: npt.NDArray[np.float32],
    threshold: float,
    exclude: Collection[str],
    limit: int,
) -> list[SimilarCard]:
    """Live cards of ``model_id``'s space nearest to ``vector`` within ``threshold`` (cosine distance),
    ``exclude`` left out; when none pass, the ``FALLBACK_NEAREST`` nearest, marked so (DESIGN.md §5: the
    rule of similar cards and of a TIL's recall cards)."""
    conn = session.connection()
    scored = nearest(conn, model_id, vector, max(NEAREST_CHECKED, limit), exclude)
    if not scored:
        return []
    live = live_in_space(conn, [card_id for card_id, _ in scored], model_id)
    rows = [(card_id, 1.0 - similarity) for card_id, similarity in scored if card_id in live]
    passing = [row for row in rows if row[1] <= threshold][:limit]
    chosen = passing or rows[: min(limit, FALLBACK_NEAREST)]
    ids = [card_id for card_id, _distance in chosen]
    cards = {card.id: card for card in _summaries(conn, _LIVE_SUMMARIES_OF, ids=ids)}
    return [
        SimilarCard(cards[card_id], distance, bool(passing), model_id)
        for card_id, distance in chosen
        if card_id in cards
    ]
