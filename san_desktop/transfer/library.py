"""What an export writes, read in one go: the live cards (a deleted scrap's card and its quizzes stay out),
their quizzes, and each day's current TIL text. Plain frozen values, so the writers never hold a session."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.enums import QuizType
from san_desktop.db.database import Database
from san_desktop.db.models import Category, DailySummary, KnowledgeCard, RecallQuiz, Scrap, Tag, TilVersion, card_tags

CHUNK = 500  # ids per IN (...) list: well below SQLite's limit of bound variables
# what a scrap says: its refined text, unless refining changed nothing ("") or has not run (NULL)
SCRAP_TEXT = sa.func.coalesce(sa.func.nullif(Scrap.refined_content, ""), Scrap.content)


def counted(number: int, thing: str, things: str = "") -> str:
    """ "1 card", "2 cards", "0 quizzes" (``things``: an irregular plural)."""
    return f"{number} {thing if number == 1 else things or thing + 's'}"


@dataclass(frozen=True)
class ExportCard:
    id: str
    title: str
    summary: str
    category: str | None
    tags: tuple[str, ...]
    source_type: str
    source_ref: str | None
    captured_at: datetime  # the scrap's capture: the day the card belongs to
    created_at: datetime
    updated_at: datetime
    text: str = ""  # the scrap's text, refined if refining changed it (read for a Markdown export only)
    import_key: str | None = None  # what it was in the source it was imported from (``scraps.import_key``)


@dataclass(frozen=True)
class ExportQuiz:
    id: str
    card: ExportCard
    quiz_type: QuizType
    question: str
    answer: str
    accepted: tuple[str, ...]
    explanation: str
    updated_at: datetime


@dataclass(frozen=True)
class ExportTil:
    summary_id: str
    local_date: str
    title: str
    markdown: str
    created_at: datetime


def tags_of(session: Session, card_ids: Sequence[str]) -> dict[str, list[str]]:
    tags: dict[str, list[str]] = {card_id: [] for card_id in card_ids}
    for start in range(0, len(card_ids), CHUNK):
        rows = session.execute(
            sa.select(card_tags.c.card_id, Tag.name)
            .join(Tag, Tag.id == card_tags.c.tag_id)
            .where(card_tags.c.card_id.in_(card_ids[start : start + CHUNK]))
        )
        for card_id, name in rows:
            tags[card_id].append(name)
    return tags


def _cards(session: Session, *, with_text: bool = False) -> dict[str, ExportCard]:
    """``with_text``: each card's scrap's whole text too (a Markdown export's; the quizzes need none)."""
    rows = session.execute(
        sa.select(
            KnowledgeCard.id,
            KnowledgeCard.title,
            KnowledgeCard.summary,
            Category.name,
            Scrap.source_type,
            Scrap.source_ref,
            Scrap.created_at,
            KnowledgeCard.created_at,
            KnowledgeCard.updated_at,
            SCRAP_TEXT if with_text else sa.literal(""),
            Scrap.import_key,
        )
        .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
        .outerjoin(Category, Category.id == KnowledgeCard.category_id)
        .where(Scrap.deleted_at.is_(None))
        .order_by(Scrap.created_at, KnowledgeCard.id)  # oldest first: a re-export names files in the same order
    ).all()
    tags = tags_of(session, [row[0] for row in rows])
    return {
        row[0]: ExportCard(
            id=row[0],
            title=row[1],
            summary=row[2],
            category=row[3],
            tags=tuple(sorted(tags[row[0]], key=str.casefold)),
            source_type=str(row[4].value),
            source_ref=row[5],
            captured_at=row[6],
            created_at=row[7],
            updated_at=row[8],
            text=row[9],
            import_key=row[10],
        )
        for row in rows
    }


def read_cards(db: Database) -> list[ExportCard]:
    """Every live card with its scrap's text, oldest capture first."""
    with db.sessions() as session:
        return list(_cards(session, with_text=True).values())


def read_quizzes(db: Database) -> tuple[list[ExportQuiz], list[ExportCard]]:
    """Every quiz of a live card (its card with it), oldest card first, and every live card."""
    with db.sessions() as session:
        cards = _cards(session)
        rows = session.scalars(sa.select(RecallQuiz).order_by(RecallQuiz.created_at, RecallQuiz.id)).all()
        quizzes = [
            ExportQuiz(
                id=quiz.id,
                card=cards[quiz.card_id],
                quiz_type=QuizType(quiz.quiz_type),
                question=quiz.question,
                answer=quiz.answer,
                accepted=tuple(json.loads(quiz.accepted or "[]")),
                explanation=quiz.explanation,
                updated_at=quiz.updated_at,
            )
            for quiz in rows
            if quiz.card_id in cards  # not a deleted scrap's
        ]
    return quizzes, list(cards.values())


def read_tils(db: Database, artifacts: ArtifactStore) -> list[ExportTil]:
    """Each day's current TIL text, oldest day first (a day whose generation has not finished has none)."""
    with db.sessions() as session:
        rows = session.execute(
            sa.select(
                DailySummary.id,
                DailySummary.local_date,
                DailySummary.title,
                DailySummary.created_at,
                TilVersion.artifact_key,
            )
            .join(TilVersion, TilVersion.summary_id == DailySummary.id)
            .where(TilVersion.version == DailySummary.current_version)
            .order_by(DailySummary.local_date)
        ).all()
    return [
        ExportTil(summary_id, local_date, title or f"TIL {local_date}", artifacts.read_text(key), created)
        for summary_id, local_date, title, created, key in rows
    ]
