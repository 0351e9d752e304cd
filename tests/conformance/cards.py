"""Cards written as the services write them, with nothing but the tables (the suite tests the backends, not the
services above them)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

from san_desktop.core.enums import SourceType
from san_desktop.core.ids import new_id
from san_desktop.core.text import content_hash
from san_desktop.db.database import Database
from san_desktop.db.models import CardEmbedding, KnowledgeCard, Scrap
from san_desktop.db.vectors import index_card_vector, to_stored, unindex_card

MODEL = "conformance-model"


def add_card(db: Database, title: str, summary: str = "", text: str = "", *, deleted: bool = False) -> str:
    """A live card (or one whose scrap is deleted) and its scrap; its id."""
    now = db.backend.clock()
    text = text or f"{title}. {summary}"
    scrap = Scrap(
        id=new_id(),
        source_type=SourceType.TEXT,
        content=text,
        content_hash=content_hash(text),
        created_at=now,
        deleted_at=now if deleted else None,
    )
    card = KnowledgeCard(id=new_id(), scrap_id=scrap.id, title=title, summary=summary, created_at=now, updated_at=now)
    with db.write() as session:
        session.add(scrap)
        session.flush()
        session.add(card)
    return card.id


def scrap_of(db: Database, card_id: str) -> str:
    with db.sessions() as session:
        return session.get_one(KnowledgeCard, card_id).scrap_id


def add_vector(db: Database, card_id: str, vector: npt.NDArray[np.float32], model: str = MODEL) -> None:
    with db.write() as session:
        session.add(
            CardEmbedding(
                card_id=card_id, model_id=model, dim=int(vector.shape[0]), vector=to_stored(vector),
                created_at=db.backend.clock(),
            )
        )  # fmt: skip
        session.flush()
        index_card_vector(session.connection(), card_id, model, vector, new=True)


def drop_vector(db: Database, card_id: str, model: str = MODEL) -> None:
    with db.write() as session:
        row = session.get_one(CardEmbedding, card_id)
        conn = session.connection()
        unindex_card(conn, card_id, model, row.dim)
        conn.execute(sa.delete(CardEmbedding).where(CardEmbedding.card_id == card_id))


def unit(values: list[float], dim: int = 64) -> npt.NDArray[np.float32]:
    """A unit vector of ``dim`` dimensions starting with ``values`` (the rest zero)."""
    vector = np.zeros(dim, dtype=np.float32)
    vector[: len(values)] = values
    return (vector / np.linalg.norm(vector)).astype(np.float32)
