"""Recall quizzes: loading the review queue (due counts and the first 100 due) with 50,000 quizzes, and a
day's quiz generation for 200 real-text cards with the embedded provider."""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fsrs import Card, State

from bench.bench_til import real_texts
from bench.common import Row, below, median, temporary_data_dir
from san_desktop.app import SanApp, open_app
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobPool, JobStatus, QuizState, QuizType
from san_desktop.core.ids import new_id
from san_desktop.core.text import content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.db.models import KnowledgeCard, RecallQuiz, Scrap
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import registry_for
from san_desktop.services.quizzes import ALL_QUIZ_TYPES, new_schedule

QUIZZES = 50_000
CARDS = 200
REPEATS = 9
QUEUE_PAGE = 100
SENTENCE = (
    "The write-ahead log keeps new pages apart until a checkpoint copies them into the database file, "
    "so readers keep a consistent snapshot while one writer commits. "
)
KOREAN = "트랜잭션 격리 수준은 동시에 실행되는 트랜잭션이 서로의 변경을 얼마나 볼 수 있는지 정한다. "


# --- the review queue at 50,000 quizzes -----------------------------------------------------------


def _schedule(n: int, rng: random.Random, now: datetime) -> tuple[QuizState, str, datetime]:
    """A long-used collection: 10% new, 5% learning, 3% relearning, 82% in review; about four in five due
    already (new ones since they were made, reviews up to 90 days overdue or up to 20 days ahead)."""
    share = n % 100
    if share < 10:
        made = now - timedelta(days=rng.uniform(0, 30))
        fsrs_card, due = new_schedule(made)  # (py-fsrs waits 1 ms per new card for a unique card id)
        return QuizState.NEW, fsrs_card, due
    if share < 18:
        state = State.Learning if share < 15 else State.Relearning
        due = now + timedelta(minutes=rng.uniform(-600, 10))
        card = Card(n, state, 0, rng.uniform(0.5, 3), rng.uniform(4, 8), due, due - timedelta(minutes=10))
        return (QuizState.LEARNING if state is State.Learning else QuizState.RELEARNING), card.to_json(), due
    stability = rng.uniform(2, 200)
    due = now + timedelta(days=rng.uniform(-90, 20))
    card = Card(n, State.Review, None, stability, rng.uniform(2, 9), due, due - timedelta(days=stability))
    return QuizState.REVIEW, card.to_json(), due


def _fill(app: SanApp) -> tuple[int, float]:
    """25,000 scraps and cards (1% of the scraps deleted) with an OX and a short-answer quiz each, 2% of
    them suspended, inserted in one transaction; the rows and the seconds it took."""
    started = time.perf_counter()
    rng = random.Random(14)
    now = utcnow()
    scraps, cards, quizzes = [], [], []
    for n in range(QUIZZES // 2):
        scrap_id, card_id = new_id(), new_id()
        text = (KOREAN if n % 4 == 3 else SENTENCE) * (1 + n % 3) + f"(note {n})"
        created = db_time(now - timedelta(days=rng.uniform(0, 400)))
        deleted = created if n % 100 == 99 else None
        scraps.append((scrap_id, "TEXT", text, content_hash(text), created, deleted))
        title = f"{text[:60]}…"
        cards.append((card_id, scrap_id, title, text[:400], created, created))
        for quiz_type in ALL_QUIZ_TYPES:
            state, fsrs_card, due = _schedule(len(quizzes), rng, now)
            ox = quiz_type is QuizType.OX
            question = text[:160] if ox else text[:160].replace("checkpoint", "_____").replace("격리", "_____")
            quizzes.append(
                (
                    new_id(), card_id, quiz_type.value, question, "O" if ox else "checkpoint", "[]",
                    f"From “{title}”: {text[:160]}", state.value, fsrs_card, db_time(due),
                    len(quizzes) % 50 == 7, created, created,
                )
            )  # fmt: skip
    with app.db.write_cursor() as cursor:
        cursor.executemany(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at, deleted_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            scraps,
        )
        cursor.executemany(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            cards,
        )
        cursor.executemany(
            "INSERT INTO recall_quizzes (id, card_id, quiz_type, question, answer, accepted, explanation, "
            "state, fsrs_card, due_at, suspended, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            quizzes,
        )
    return len(quizzes), time.perf_counter() - started


def _timed(call: Any) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _raw_queue(app: SanApp, now: datetime) -> Any:
    """The queue as its first version loaded it, on the DB-API connection below the ORM: every due quiz
    joined to its card and scrap, counted, and sorted by state for the first page. The service now walks
    the due index in order instead; this stays as the anchor it is compared with."""
    live = (
        sa.select(RecallQuiz, KnowledgeCard.title)
        .join(KnowledgeCard, KnowledgeCard.id == RecallQuiz.card_id)
        .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
        .where(Scrap.deleted_at.is_(None), RecallQuiz.suspended.is_(False), RecallQuiz.due_at <= now)
    )
    counts = (
        sa.select(RecallQuiz.state, sa.func.count())
        .join(KnowledgeCard, KnowledgeCard.id == RecallQuiz.card_id)
        .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
        .where(Scrap.deleted_at.is_(None), RecallQuiz.suspended.is_(False), RecallQuiz.due_at <= now)
        .group_by(RecallQuiz.state)
    )
    page = live.order_by(
        sa.case((RecallQuiz.state == QuizState.NEW, 1), else_=0), RecallQuiz.due_at, RecallQuiz.id
    ).limit(QUEUE_PAGE)
    dialect = app.db.engine.dialect
    counts_sql, page_sql = str(counts.compile(dialect=dialect)), str(page.compile(dialect=dialect))
    at = db_time(now)

    def run() -> tuple[list[Any], list[Any]]:
        raw = app.db.engine.raw_connection()
        try:
            cursor = raw.cursor()
            found = cursor.execute(counts_sql, (at,)).fetchall()
            rows = cursor.execute(page_sql, (at, QuizState.NEW.value, 1, 0, QUEUE_PAGE, 0)).fetchall()
            cursor.close()
            return found, rows
        finally:
            raw.close()

    return run


def bench_review_queue() -> list[Row]:
    with temporary_data_dir() as directory:
        with open_app(directory, kind="cli", lock=False, log_to_stderr=False) as app:
            total, built = _fill(app)
        with open_app(directory, kind="cli", lock=False, log_to_stderr=False) as app:
            quizzes = app.quizzes
            now = utcnow()
            cold = _timed(lambda: (quizzes.due_counts(now), quizzes.due(QUEUE_PAGE, now)))
            counts_ms = [_timed(lambda: quizzes.due_counts(now)) for _ in range(REPEATS)]
            page_ms = [_timed(lambda: quizzes.due(QUEUE_PAGE, now)) for _ in range(REPEATS)]
            both = [a + b for a, b in zip(counts_ms, page_ms, strict=True)]
            raw = _raw_queue(app, now)
            raw_rows = raw()
            raw_ms = [_timed(raw) for _ in range(REPEATS)]
            due = quizzes.due_counts(now)
            page = quizzes.due(QUEUE_PAGE, now)
            assert len(page) == len(raw_rows[1]) == QUEUE_PAGE
            assert [row[0] for row in raw_rows[1]] == [quiz.id for quiz in page]
    note = (
        f"{due.total:,} due ({due.new:,} new, {due.learning:,} learning, {due.review:,} review); counts "
        f"{median(counts_ms):.1f} + first {QUEUE_PAGE} {median(page_ms):.1f} ms; first load {cold:.0f} ms; "
        f"{total:,} rows built in {built:.1f} s"
    )
    return [
        Row(
            f"quiz review queue at {total // 1000}k quizzes: due counts + first {QUEUE_PAGE} due",
            median(both),
            "ms",
            note,
            anchor=median(raw_ms),
            anchor_name="one joined query, raw sqlite3",
            target=below(50),
        )
    ]


# --- a day's generation with the embedded provider --------------------------------------------------


def bench_generation() -> list[Row]:
    with temporary_data_dir() as directory:
        app = SanApp(start_backend(Path(directory), kind="gui", log_to_stderr=False))
        try:
            for text in real_texts(CARDS):
                app.capture_text(text)
            executor = JobExecutor(app.queue, registry_for(app), app.backend.require_session(), breakers={})
            executor.drain(JobPool.AI)
            day = app.til.today()
            cards, _revision = app.til.collect(day)

            start = time.perf_counter()
            job = app.generate_quizzes(day).value
            executor.drain(JobPool.AI)
            elapsed = (time.perf_counter() - start) * 1000
            assert app.queue.get(job.id).status is JobStatus.COMPLETED
            made = app.quizzes.day(day)
            assert made is not None
            kinds = Counter(quiz.quiz_type for quiz in app.quizzes.all(limit=10 * CARDS))

            provider = app.providers.get()
            provider_ms = median([_timed(lambda: provider.make_quizzes(cards, ALL_QUIZ_TYPES)) for _ in range(3)])
            collect_ms = median([_timed(lambda: app.til.collect(day)) for _ in range(3)])
            new_cards_ms = _timed(lambda: [new_schedule(utcnow()) for _ in range(made.made)])
        finally:
            app.close()
    note = (
        f"{made.made} made ({kinds[QuizType.OX]} OX, {kinds[QuizType.SHORT_ANSWER]} short answer), "
        f"{made.dropped} dropped, for {len(cards)} cards; the day's cards read in {collect_ms:.0f} ms; "
        f"{made.made} fresh FSRS cards take {new_cards_ms:.0f} ms alone"
    )
    return [
        Row(
            f"quizzes of a day of {len(cards)} cards, embedded provider (job end to end)",
            elapsed,
            "ms",
            note,
            anchor=provider_ms,
            anchor_name="provider make_quizzes",
        )
    ]


def run_all() -> list[Row]:
    return bench_review_queue() + bench_generation()


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
