"""Recall quizzes: a day's generation (through a RECALL_QUIZ_GENERATION job), the review queue, and
answers scheduled by FSRS (py-fsrs, the scheduler Anki uses). Every answer writes a review row in the same
transaction as the new schedule: nothing is rescheduled without its log. All times are UTC."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from fsrs import Card, Rating, Scheduler, State
from sqlalchemy.orm import Session

from san_desktop.ai.base import QuizDraft
from san_desktop.core.enums import JobType, QuizState, QuizType
from san_desktop.core.errors import SanError
from san_desktop.core.settings import QuizSettings
from san_desktop.core.timeutil import utcnow
from san_desktop.db.database import Database
from san_desktop.db.models import KnowledgeCard, RecallQuiz, RecallQuizGeneration, RecallQuizReview, Scrap
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.changes import Changed, Changes

ALL_QUIZ_TYPES: tuple[QuizType, ...] = (QuizType.OX, QuizType.SHORT_ANSWER)
# what answering, editing, suspending or deleting a quiz changed (made ones come as their job)
QUIZZES_CHANGED = Changes(quizzes=True)
RATINGS = {"again": 1, "hard": 2, "good": 3, "easy": 4}
RATING_NAMES = {value: name.capitalize() for name, value in RATINGS.items()}
_FSRS_STATE = {
    State.Learning: QuizState.LEARNING,
    State.Review: QuizState.REVIEW,
    State.Relearning: QuizState.RELEARNING,
}


class QuizNotFoundError(SanError):
    exit_code = 5

    def __init__(self, quiz_id: str) -> None:
        super().__init__(f"No quiz {quiz_id}: it was deleted, or its card was.")


@dataclass(frozen=True)
class DueCounts:
    """What the review page shows as Anki does: new, learning (and relearning), review."""

    new: int = 0
    learning: int = 0
    review: int = 0

    @property
    def total(self) -> int:
        return self.new + self.learning + self.review


@dataclass(frozen=True)
class QuizView:
    id: str
    card_id: str
    card_title: str
    quiz_type: QuizType
    question: str
    answer: str
    accepted: tuple[str, ...]
    explanation: str
    state: QuizState
    due_at: datetime
    suspended: bool


@dataclass(frozen=True)
class QuizDay:
    """What a generation of a day made."""

    local_date: str
    made: int
    dropped: int
    quizzes: int  # quizzes of the day's cards now


def types_key(quiz_types: Sequence[QuizType]) -> str:
    return ",".join(sorted({quiz_type.value for quiz_type in quiz_types}))


def scheduler(desired_retention: float) -> Scheduler:
    # no fuzzing: the interval a rating button shows is the one the answer gets
    return Scheduler(desired_retention=desired_retention, enable_fuzzing=False)


_fsrs_ids = itertools.count(time.time_ns() // 1000)


def new_schedule(now: datetime) -> tuple[str, datetime]:
    """A fresh quiz's FSRS card (JSON) and due time: due at once, as new. The card gets its id here: left
    to py-fsrs, each new card waits a millisecond to make its id unique (400 quizzes held the write lock
    for 0.44 s)."""
    card = Card(card_id=next(_fsrs_ids), due=now)
    return card.to_json(), now


def _view(quiz: RecallQuiz, title: str) -> QuizView:
    return QuizView(
        id=quiz.id,
        card_id=quiz.card_id,
        card_title=title,
        quiz_type=QuizType(quiz.quiz_type),
        question=quiz.question,
        answer=quiz.answer,
        accepted=tuple(json.loads(quiz.accepted or "[]")),
        explanation=quiz.explanation,
        state=QuizState(quiz.state),
        due_at=quiz.due_at,
        suspended=quiz.suspended,
    )


def _live() -> Any:
    """Quizzes whose card is still there (a deleted scrap takes its card's quizzes out of the queue)."""
    return (
        sa.select(RecallQuiz, KnowledgeCard.title)
        .join(KnowledgeCard, KnowledgeCard.id == RecallQuiz.card_id)
        .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
        .where(Scrap.deleted_at.is_(None))
    )


def request_generation(
    session: Session, queue: JobStore, local_date: str, quiz_types: Sequence[QuizType] = ALL_QUIZ_TYPES
) -> JobRecord:
    """Ask for a day's quizzes in the caller's transaction (a TIL that completes asks with it): the day's
    generation row, made once, and its job (the one waiting or running, if any)."""
    key = types_key(quiz_types)
    generation = session.scalar(
        sa.select(RecallQuizGeneration).where(
            RecallQuizGeneration.local_date == local_date, RecallQuizGeneration.quiz_types == key
        )
    )
    if generation is None:
        generation = RecallQuizGeneration(local_date=local_date, quiz_types=key)
        session.add(generation)
        session.flush()
    return queue.active_or_enqueue(session, JobType.RECALL_QUIZ_GENERATION, generation.id)


class QuizService:
    def __init__(
        self,
        db: Database,
        queue: JobStore,
        retention: Callable[[], float] = lambda: QuizSettings().desired_retention,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.queue = queue
        self.retention = retention
        self.clock = clock

    # --- generation ---------------------------------------------------------------------------

    def generate(self, local_date: str, quiz_types: Sequence[QuizType] = ALL_QUIZ_TYPES) -> JobRecord:
        """Ask for a day's quizzes (``local_date`` checked by the caller); while a generation of the day
        runs, its job is returned instead of a second."""
        with self.db.write() as session:
            return request_generation(session, self.queue, local_date, quiz_types)

    def existing_keys(self, card_ids: Sequence[str]) -> set[tuple[str, QuizType]]:
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(RecallQuiz.card_id, RecallQuiz.quiz_type).where(RecallQuiz.card_id.in_(card_ids))
            ).all()
        return {(card_id, QuizType(quiz_type)) for card_id, quiz_type in rows}

    def store(self, session: Session, generation_id: str, drafts: Sequence[QuizDraft], dropped: int) -> int:
        """Keep checked drafts (one per card and type; one that exists already is not made again) and the
        generation's counts; how many were added."""
        now = self.clock()
        cards = sorted({draft.card_id for draft in drafts})
        taken = {
            (card_id, QuizType(quiz_type))
            for card_id, quiz_type in session.execute(
                sa.select(RecallQuiz.card_id, RecallQuiz.quiz_type).where(RecallQuiz.card_id.in_(cards))
            )
        }
        made = 0
        for draft in drafts:
            if (draft.card_id, draft.quiz_type) in taken:
                continue
            taken.add((draft.card_id, draft.quiz_type))
            fsrs_card, due = new_schedule(now)
            session.add(
                RecallQuiz(
                    card_id=draft.card_id,
                    generation_id=generation_id,
                    quiz_type=draft.quiz_type,
                    question=draft.question,
                    answer=draft.answer,
                    accepted=json.dumps(list(draft.accepted), ensure_ascii=False),
                    explanation=draft.explanation,
                    state=QuizState.NEW,
                    fsrs_card=fsrs_card,
                    due_at=due,
                    suspended=False,
                )
            )
            made += 1
        generation = session.get(RecallQuizGeneration, generation_id)
        if generation is not None:
            generation.made, generation.dropped = made, dropped
        return made

    def generation(self, generation_id: str) -> tuple[str, list[QuizType]]:
        """A generation's day and quiz types."""
        with self.db.sessions() as session:
            row = session.get(RecallQuizGeneration, generation_id)
            if row is None:
                raise SanError(f"No quiz generation {generation_id}")
            return row.local_date, [QuizType(value) for value in row.quiz_types.split(",") if value]

    def labels(self, generation_ids: Sequence[str]) -> dict[str, str]:
        """A human label per generation ("Quizzes of 2026-11-30"), for job lists."""
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(RecallQuizGeneration.id, RecallQuizGeneration.local_date).where(
                    RecallQuizGeneration.id.in_(generation_ids)
                )
            ).all()
        return {generation_id: f"Quizzes of {local_date}" for generation_id, local_date in rows}

    def day(self, local_date: str) -> QuizDay | None:
        with self.db.sessions() as session:
            rows = session.scalars(
                sa.select(RecallQuizGeneration).where(RecallQuizGeneration.local_date == local_date)
            ).all()
            if not rows:
                return None
            count = session.scalar(
                sa.select(sa.func.count())
                .select_from(RecallQuiz)
                .join(RecallQuizGeneration, RecallQuizGeneration.id == RecallQuiz.generation_id)
                .where(RecallQuizGeneration.local_date == local_date)
            )
            return QuizDay(local_date, sum(r.made for r in rows), sum(r.dropped for r in rows), int(count or 0))

    # --- the review queue ---------------------------------------------------------------------

    def due_counts(self, now: datetime | None = None) -> DueCounts:
        """Counted from the (suspended, due_at, state) index alone, less the due quizzes of the cards of
        deleted scraps (which are few; looked up by card): joining every due quiz to its card and scrap
        reads every due quiz, which grows with the library."""
        now = now or self.clock()
        due = (RecallQuiz.suspended.is_(False), RecallQuiz.due_at <= now)
        everything = sa.select(RecallQuiz.state, sa.func.count()).where(*due).group_by(RecallQuiz.state)
        with self.db.sessions() as session:
            found = {QuizState(state): int(count) for state, count in session.execute(everything)}
            hidden_cards = list(
                session.scalars(
                    sa.select(KnowledgeCard.id)
                    .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
                    .where(Scrap.deleted_at.is_not(None))
                )
            )
            for start in range(0, len(hidden_cards), 500):
                # by card id alone, the rest checked here: given the due condition too, SQLite walked the
                # whole due index instead of the few rows of these cards
                hidden = sa.select(RecallQuiz.state, RecallQuiz.suspended, RecallQuiz.due_at).where(
                    RecallQuiz.card_id.in_(hidden_cards[start : start + 500])
                )
                for state, suspended, due_at in session.execute(hidden):
                    if not suspended and due_at <= now:
                        found[QuizState(state)] -= 1
        return DueCounts(
            new=found.get(QuizState.NEW, 0),
            learning=found.get(QuizState.LEARNING, 0) + found.get(QuizState.RELEARNING, 0),
            review=found.get(QuizState.REVIEW, 0),
        )

    def due(self, limit: int = 100, now: datetime | None = None) -> list[QuizView]:
        """Quizzes due now: learning and review ones by due time first, then new ones. Two
        queries that walk the due index in order and stop at ``limit`` (one ordered by state sorted every
        due quiz first)."""
        now = now or self.clock()
        due = (RecallQuiz.suspended.is_(False), RecallQuiz.due_at <= now)
        seen = _live().where(*due, RecallQuiz.state != QuizState.NEW).order_by(RecallQuiz.due_at, RecallQuiz.id)
        # new ones type by type: a card's two quizzes, made together, do not come back to back (its true
        # statement would give its cloze away)
        new = (
            _live()
            .where(*due, RecallQuiz.state == QuizState.NEW)
            .order_by(RecallQuiz.quiz_type, RecallQuiz.due_at, RecallQuiz.id)
        )
        with self.db.sessions() as session:
            found = [_view(quiz, title) for quiz, title in session.execute(seen.limit(limit))]
            if len(found) < limit:
                found += [_view(quiz, title) for quiz, title in session.execute(new.limit(limit - len(found)))]
        return found

    def get(self, quiz_id: str) -> QuizView:
        with self.db.sessions() as session:
            row = session.execute(_live().where(RecallQuiz.id == quiz_id)).first()
            if row is None:
                raise QuizNotFoundError(quiz_id)
            return _view(row[0], row[1])

    def all(self, *, suspended: bool | None = None, limit: int = 1000) -> list[QuizView]:
        query = _live().order_by(RecallQuiz.due_at).limit(limit)
        if suspended is not None:
            query = query.where(RecallQuiz.suspended.is_(suspended))
        with self.db.sessions() as session:
            return [_view(quiz, title) for quiz, title in session.execute(query)]

    # --- answers ------------------------------------------------------------------------------

    def intervals(self, quiz_id: str, now: datetime | None = None) -> dict[int, timedelta]:
        """What each rating (1-4) would schedule: the next due time minus now."""
        now = now or self.clock()
        with self.db.sessions() as session:
            found = session.execute(_live().where(RecallQuiz.id == quiz_id)).first()
            if found is None:
                raise QuizNotFoundError(quiz_id)
            card = Card.from_json(found[0].fsrs_card)
        planner = scheduler(self.retention())
        return {
            rating: planner.review_card(card, Rating(rating), review_datetime=now)[0].due - now
            for rating in RATING_NAMES
        }

    def answer(
        self, quiz_id: str, rating: int, duration_ms: int | None = None, now: datetime | None = None
    ) -> Changed[QuizView]:
        """Rate a quiz (1 Again, 2 Hard, 3 Good, 4 Easy): its new schedule and the review row together."""
        if rating not in RATING_NAMES:
            raise SanError(f"A rating is 1-4 (again, hard, good, easy), not {rating!r}.")
        now = now or self.clock()
        with self.db.write() as session:
            found = session.execute(_live().where(RecallQuiz.id == quiz_id)).first()
            if found is None:
                raise QuizNotFoundError(quiz_id)
            quiz, title = found
            if quiz.suspended:
                raise SanError("This quiz is suspended: unsuspend it to review it.")
            before = QuizState(quiz.state)
            card, _log = scheduler(self.retention()).review_card(
                Card.from_json(quiz.fsrs_card), Rating(rating), review_datetime=now, review_duration=duration_ms
            )
            quiz.fsrs_card = card.to_json()
            quiz.state = _FSRS_STATE[card.state]
            quiz.due_at = card.due
            session.add(
                RecallQuizReview(
                    quiz_id=quiz.id,
                    rating=rating,
                    reviewed_at=now,
                    duration_ms=duration_ms,
                    state_before=before,
                    due_after=card.due,
                )
            )
            session.flush()
            return Changed(_view(quiz, title), QUIZZES_CHANGED)

    def reviews(self, quiz_id: str) -> list[tuple[int, datetime, QuizState, datetime]]:
        """(rating, when, state before, due after) of every answer, oldest first."""
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(
                    RecallQuizReview.rating,
                    RecallQuizReview.reviewed_at,
                    RecallQuizReview.state_before,
                    RecallQuizReview.due_after,
                )
                .where(RecallQuizReview.quiz_id == quiz_id)
                .order_by(RecallQuizReview.reviewed_at, RecallQuizReview.id)
            ).all()
        return [(rating, at, QuizState(state), due) for rating, at, state, due in rows]

    # --- editing ------------------------------------------------------------------------------

    def suspend(self, quiz_id: str, suspended: bool = True) -> Changed[QuizView]:
        return self._change(quiz_id, suspended=suspended)

    def edit(
        self, quiz_id: str, *, question: str, answer: str, accepted: Sequence[str] = (), explanation: str = ""
    ) -> Changed[QuizView]:
        if not question.strip() or not answer.strip():
            raise SanError("A quiz needs a question and an answer.")
        return self._change(
            quiz_id,
            question=question.strip(),
            answer=answer.strip(),
            accepted=json.dumps([a.strip() for a in accepted if a.strip()], ensure_ascii=False),
            explanation=explanation.strip(),
        )

    def _change(self, quiz_id: str, **values: Any) -> Changed[QuizView]:
        with self.db.write() as session:
            found = session.execute(_live().where(RecallQuiz.id == quiz_id)).first()
            if found is None:
                raise QuizNotFoundError(quiz_id)
            quiz, title = found
            for name, value in values.items():
                setattr(quiz, name, value)
            session.flush()
            return Changed(_view(quiz, title), QUIZZES_CHANGED)

    def delete(self, quiz_id: str) -> Changes:
        with self.db.write() as session:
            deleted = session.execute(sa.delete(RecallQuiz).where(RecallQuiz.id == quiz_id))
            if not getattr(deleted, "rowcount", 0):
                raise QuizNotFoundError(quiz_id)
        return QUIZZES_CHANGED
