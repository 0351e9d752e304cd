"""Recall quizzes: generation by the embedded and the OpenAI-compatible provider (answers checked against
their cards), and FSRS scheduling with an injected clock (state and logs kept across a restart)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from san_desktop.ai.base import TilCard
from san_desktop.ai.factory import ProviderSource
from san_desktop.ai.quizzes import answer_matches, normalize_answer, verify
from san_desktop.app import SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobPool, JobStatus, JobType, QuizState, QuizType
from san_desktop.core.errors import SanError
from san_desktop.core.settings import AISettings
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.services.quizzes import QuizView
from tests.support.jobs import jobs_of
from tests.support.openai_server import fake_openai_server
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import executor, quizzes_of_today

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4


def _day_cards(app: SanApp, day: str) -> dict[str, TilCard]:
    cards, _revision = app.til.collect(day)
    return {card.card_id: card for card in cards}


def test_the_embedded_provider_quizzes_every_card_with_answers_found_in_it(app: SanApp) -> None:
    day = quizzes_of_today(app, QUIZ_TEXTS)
    cards = _day_cards(app, day)
    quizzes = app.quizzes.all()
    assert len(cards) == 9
    for card_id, card in cards.items():
        mine = [quiz for quiz in quizzes if quiz.card_id == card_id]
        assert {quiz.quiz_type for quiz in mine} == {QuizType.OX, QuizType.SHORT_ANSWER}, card.title
        cloze = next(quiz for quiz in mine if quiz.quiz_type is QuizType.SHORT_ANSWER)
        assert normalize_answer(cloze.answer) in normalize_answer(f"{card.title} {card.summary}")
        assert "_____" in cloze.question
        assert cloze.answer not in cloze.question
        statement = next(quiz for quiz in mine if quiz.quiz_type is QuizType.OX)
        assert statement.answer in ("O", "X")
        if statement.answer == "O":
            assert statement.question in card.summary  # a true sentence, taken from the card
    assert {quiz.state for quiz in quizzes} == {QuizState.NEW}
    made = app.quizzes.day(day)
    assert made is not None
    assert (made.made, made.dropped, made.quizzes) == (18, 0, 18)

    app.generate_quizzes(day)  # again: nothing new to make
    executor(app).drain(JobPool.AI)
    assert len(app.quizzes.all()) == 18
    again = app.quizzes.day(day)
    assert again is not None
    assert again.made == 0
    generations = jobs_of(app.queue, JobType.RECALL_QUIZ_GENERATION)
    assert len(generations) == 2
    assert app.job_labels(generations) == {generations[0].target_id: f"Quizzes of {day}"}  # as the monitor names it


def test_a_day_without_cards_gets_no_quizzes(app: SanApp) -> None:
    with pytest.raises(SanError, match="no cards from 2020-01-01"):
        app.generate_quizzes("2020-01-01")
    with pytest.raises(SanError, match="Not a date"):
        app.generate_quizzes("yesterday")


def test_a_finished_til_asks_for_its_days_quizzes(app: SanApp) -> None:
    from tests.support.til import finished_til

    day = finished_til(app)
    executor(app).drain(JobPool.AI)
    (job,) = jobs_of(app.queue, JobType.RECALL_QUIZ_GENERATION)
    assert job.status is JobStatus.COMPLETED
    assert app.quizzes.day(day) is not None


def test_a_model_quiz_whose_answer_is_not_in_its_card_is_dropped(app: SanApp) -> None:
    app.capture_text("SQLite WAL mode lets readers continue while a writer commits.")
    executor(app).drain(JobPool.AI)  # the card, made by the embedded provider
    day = app.til.today()
    with fake_openai_server() as server:
        server.quizzes = [
            {"card": 1, "type": "SHORT_ANSWER", "question": "What lets readers go on?", "answer": "WAL mode",
             "accepted": ["WAL"], "explanation": "The card says so."},
            {"card": 1, "type": "SHORT_ANSWER", "question": "Who invented it?", "answer": "D. Richard Hipp",
             "accepted": [], "explanation": "Not in the card."},
            {"card": 7, "type": "OX", "question": "A card that is not there.", "answer": "O",
             "accepted": [], "explanation": ""},
            {"card": 1, "type": "OX", "question": "Readers continue while a writer commits in WAL mode.",
             "answer": "o", "accepted": [], "explanation": "True."},
        ]  # fmt: skip
        providers = ProviderSource(
            AISettings(provider="openai", base_url=server.url, chat_model="m", embedding_model="e", timeout_seconds=5)
        )
        runner = JobExecutor(
            app.queue, build_registry(app.services, providers), app.backend.require_session(), breakers={}
        )
        job = app.generate_quizzes(day).value
        runner.drain(JobPool.AI)

    assert app.queue.get(job.id).status is JobStatus.COMPLETED
    kept = sorted((quiz.quiz_type.value, quiz.answer) for quiz in app.quizzes.all())
    assert kept == [("OX", "O"), ("SHORT_ANSWER", "WAL mode")]
    made = app.quizzes.day(day)
    assert made is not None
    assert (made.made, made.dropped) == (2, 1)  # the one about card 7 named no card: not even a draft


def _start(app: SanApp) -> datetime:
    """A moment just after the quizzes were made (they are due from then on)."""
    return app.clock().replace(microsecond=0) + timedelta(minutes=1)


def _quiz(app: SanApp) -> QuizView:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    return app.quizzes.all()[0]


def test_good_schedules_a_new_quiz_later_than_again(app: SanApp) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    first, second = app.quizzes.all()
    start = _start(app)
    good = app.quizzes.answer(first.id, GOOD, now=start).value
    again = app.quizzes.answer(second.id, AGAIN, now=start).value
    assert again.due_at > start
    assert good.due_at > again.due_at
    intervals = app.quizzes.intervals(first.id, now=good.due_at)
    assert intervals[AGAIN] < intervals[HARD] <= intervals[GOOD] < intervals[EASY]


def test_again_on_a_review_quiz_sends_it_to_relearning(app: SanApp) -> None:
    quiz = _quiz(app)
    now = _start(app)
    while quiz.state is not QuizState.REVIEW:
        quiz = app.quizzes.answer(quiz.id, GOOD, now=now).value
        now = quiz.due_at
    lapsed = app.quizzes.answer(quiz.id, AGAIN, now=now).value
    assert lapsed.state is QuizState.RELEARNING
    assert lapsed.due_at < now + timedelta(hours=1)  # relearning comes back within minutes


def test_schedule_and_reviews_survive_a_restart(app: SanApp, data_dir: Path) -> None:
    quiz = _quiz(app)
    start = _start(app)
    answered = app.quizzes.answer(quiz.id, GOOD, duration_ms=4200, now=start).value
    app.close()

    again = SanApp(start_backend(data_dir, kind="cli", lock=False, log_to_stderr=False))
    try:
        reopened = again.quizzes.get(quiz.id)
        assert (reopened.state, reopened.due_at) == (answered.state, answered.due_at)
        assert again.quizzes.reviews(quiz.id) == [(GOOD, start, QuizState.NEW, answered.due_at)]
        later = again.quizzes.answer(quiz.id, GOOD, now=answered.due_at).value
        assert later.due_at > answered.due_at  # the schedule went on from the stored state
    finally:
        again.close()


def test_thirty_days_of_200_quizzes_keep_every_due_date_after_its_review(app: SanApp) -> None:
    texts = tuple(
        f"{QUIZ_TEXTS[n % len(QUIZ_TEXTS)]} Note {n}: SQLite page {n} belongs to table T{n}." for n in range(100)
    )
    quizzes_of_today(app, texts)
    start = _start(app)
    quizzes = app.quizzes.all()
    assert len(quizzes) >= 200
    chooser = random.Random(7)
    answered = 0
    for day in range(30):
        now = start + timedelta(days=day)
        for minute in range(0, 60 * 12, 30):  # a learner who looks every half hour for twelve hours
            moment = now + timedelta(minutes=minute)
            for quiz in app.quizzes.due(limit=1000, now=moment):
                rating = chooser.choices((AGAIN, HARD, GOOD, EASY), weights=(1, 2, 6, 1))[0]
                after = app.quizzes.answer(quiz.id, rating, now=moment).value
                assert after.due_at > moment
                answered += 1
    assert answered > 600
    for quiz in app.quizzes.all(limit=1000):
        reviews = app.quizzes.reviews(quiz.id)
        assert reviews, "every quiz was answered at least once"
        assert all(due > at for _rating, at, _state, due in reviews)
        assert quiz.due_at == reviews[-1][3]  # nothing rescheduled without a log


def test_quizzes_of_a_deleted_scrap_leave_the_queue(app: SanApp) -> None:
    quiz = _quiz(app)
    start = _start(app)
    assert app.quizzes.due_counts(now=start + timedelta(days=400)).new == 2
    scrap_id = app.scraps.list_scraps()[0].id
    app.delete_scrap(scrap_id)
    assert app.quizzes.due_counts(now=start + timedelta(days=400)).total == 0
    assert app.quizzes.due(now=start + timedelta(days=400)) == []
    with pytest.raises(SanError, match="No quiz"):
        app.quizzes.answer(quiz.id, GOOD)


def test_suspend_edit_and_delete(app: SanApp) -> None:
    quiz = _quiz(app)
    later = _start(app) + timedelta(days=400)
    app.suspend_quiz(quiz.id)
    assert quiz.id not in {due.id for due in app.quizzes.due(now=later)}
    assert app.quizzes.due_counts(now=later).new == 1
    with pytest.raises(SanError, match="suspended"):
        app.quizzes.answer(quiz.id, GOOD)
    app.suspend_quiz(quiz.id, False)
    edited = app.edit_quiz(quiz.id, question="Q?", answer="A", accepted=["a1", " "], explanation="E").value
    assert (edited.question, edited.answer, edited.accepted, edited.explanation) == ("Q?", "A", ("a1",), "E")
    app.delete_quiz(quiz.id)
    with pytest.raises(SanError, match="No quiz"):
        app.quizzes.get(quiz.id)


@pytest.mark.parametrize(
    ("typed", "answer", "expected"),
    [
        ("write-ahead log", "Write-Ahead Log", True),
        ("  WAL ", "wal", True),
        ("트랜잭션은", "트랜잭션", True),
        ("트랜잭션을", "트랜잭션", True),
        ("useEffect!", "useEffect", True),
        ("useState", "useEffect", False),
        ("", "anything", False),
    ],
)
def test_typed_answers_compare_without_case_spacing_punctuation_or_particles(
    typed: str, answer: str, expected: bool
) -> None:
    assert answer_matches(typed, answer) is expected


def test_a_statement_about_something_else_is_not_checkable() -> None:
    card = TilCard("c", "SQLite WAL", "WAL lets readers work during writes.", ("SQLite", "WAL"), "Databases", None)
    about_card = verify_ox("Readers work during writes with WAL.", card)
    about_else = verify_ox("Kubernetes pods share a network namespace.", card)
    assert (about_card, about_else) == (True, False)


def verify_ox(statement: str, card: TilCard) -> bool:
    from san_desktop.ai.base import QuizDraft

    return verify(QuizDraft(card.card_id, QuizType.OX, statement, "O"), card)
