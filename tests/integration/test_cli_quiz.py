"""``san quiz``: generate, due, answer and the terminal review session, in child processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from san_desktop.app import SanApp, open_app
from san_desktop.core.enums import JobPool, QuizState, QuizType
from san_desktop.db.models import RecallQuizReview
from tests.support.processes import child_env, run_san
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import executor

TEXTS = QUIZ_TEXTS[:3]  # three cards: each gets an OX and a short-answer quiz
GOOD = 3


def _review(stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "san_desktop.cli.main", "quiz", "review"],
        input=stdin,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )


def _due() -> dict[str, Any]:
    result = run_san("quiz", "due", "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _quizzes_of_today(app: SanApp) -> list[str]:
    """The day's cards and quizzes made in this process (the embedded provider); the due quizzes' ids."""
    for text in TEXTS:
        app.capture_text(text)
    runner = executor(app)
    runner.drain(JobPool.AI)
    app.generate_quizzes(app.til.today())
    runner.drain(JobPool.AI)
    return [quiz.id for quiz in app.quizzes.due()]


def test_generate_runs_as_a_job_and_due_lists_the_days_quizzes(data_dir: Path) -> None:
    for text in TEXTS:
        assert run_san("scrap", "add", "--text", text).returncode == 0
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0

    generated = run_san("quiz", "generate")
    assert generated.returncode == 0, generated.stderr
    assert " is waiting " in generated.stdout
    assert "`san jobs run`" in generated.stdout
    assert _due()["counts"] == {"new": 0, "learning": 0, "review": 0, "total": 0}  # not made until it runs
    assert run_san("jobs", "run", "--until-idle", "--timeout", "60").returncode == 0

    due = _due()
    quizzes = due["quizzes"]
    assert len(quizzes) == 2 * len(TEXTS)
    assert due["counts"] == {"new": len(quizzes), "learning": 0, "review": 0, "total": len(quizzes)}
    assert {quiz["quiz_type"] for quiz in quizzes} == {QuizType.OX.value, QuizType.SHORT_ANSWER.value}
    assert all(quiz["state"] == "NEW" and quiz["card_title"] for quiz in quizzes)

    limited = json.loads(run_san("quiz", "due", "--json", "--limit", "2").stdout)
    assert len(limited["quizzes"]) == 2
    assert limited["counts"]["new"] == len(quizzes)

    table = run_san("quiz", "due")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith(f"Due: {len(quizzes)} new, 0 learning, 0 review")
    assert all(quiz["id"] in table.stdout for quiz in quizzes)


def test_generate_refuses_a_day_without_cards_and_a_bad_date(data_dir: Path) -> None:
    empty = run_san("quiz", "generate", "2020-01-01")
    assert empty.returncode == 1
    assert "no cards from 2020-01-01" in empty.stderr
    bad = run_san("quiz", "generate", "2020-13-01")
    assert bad.returncode == 1
    assert "Not a date" in bad.stderr
    assert "Traceback" not in empty.stderr + bad.stderr


def test_answer_good_takes_the_quiz_out_of_the_queue(app: SanApp) -> None:
    ids = _quizzes_of_today(app)
    answered = run_san("quiz", "answer", ids[0], "good")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.startswith(f"{ids[0]}: Good; now learning, due ")
    assert "(in 10m)" in answered.stdout  # FSRS's second learning step

    due = _due()
    listed = [quiz["id"] for quiz in due["quizzes"]]
    assert ids[0] not in listed
    assert sorted(listed) == sorted(ids[1:])
    assert due["counts"] == {"new": len(ids) - 1, "learning": 0, "review": 0, "total": len(ids) - 1}
    [(rating, _at, before, due_after)] = app.quizzes.reviews(ids[0])
    assert (rating, before) == (GOOD, QuizState.NEW)
    assert app.quizzes.get(ids[0]).due_at == due_after


def test_answer_refuses_a_bad_rating_and_an_unknown_quiz(app: SanApp) -> None:
    ids = _quizzes_of_today(app)
    bad = run_san("quiz", "answer", ids[0], "meh")
    assert bad.returncode == 2
    assert "a rating is again, hard, good or easy (or 1-4), not 'meh'" in bad.stderr
    unknown = run_san("quiz", "answer", "01a00000-0000-7000-8000-000000000000", "good")
    assert unknown.returncode == 5
    assert "No quiz 01a00000-0000-7000-8000-000000000000" in unknown.stderr
    assert "Traceback" not in bad.stderr + unknown.stderr
    assert all(app.quizzes.reviews(quiz_id) == [] for quiz_id in ids)
    assert app.quizzes.due_counts().new == len(ids)


def test_review_session_through_stdin_writes_every_answer(app: SanApp) -> None:
    ids = _quizzes_of_today(app)
    typed = app.quizzes.get(ids[0]).answer  # (O or X for an OX quiz)
    # the first quiz: the right answer typed, a wrong rating word, then Again; every other one: Enter, Good
    session = f"{typed}\nsoon\nagain\n" + "\n3\n" * (len(ids) - 1)
    result = _review(session)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"Due: {len(ids)} new, 0 learning, 0 review.")
    assert "— matches" in out
    assert "Type 1 Again, 2 Hard, 3 Good, 4 Easy" in out  # "soon" was not a rating
    assert "1 Again 1m   2 Hard 6m   3 Good 10m   4 Easy " in out  # each choice with its interval
    assert out.count("Answer: ") == len(ids)
    assert out.rstrip().endswith(f"Reviewed {len(ids)}: 1 again, 0 hard, {len(ids) - 1} good, 0 easy")

    assert [review[0] for review in app.quizzes.reviews(ids[0])] == [1]
    assert all([review[0] for review in app.quizzes.reviews(quiz_id)] == [GOOD] for quiz_id in ids[1:])
    with app.db.sessions() as session_:
        durations = session_.scalars(sa.select(RecallQuizReview.duration_ms)).all()
    assert len(durations) == len(ids)
    assert all(duration is not None and duration >= 0 for duration in durations)
    assert app.quizzes.due_counts().total == 0  # (the one rated Again is due again in a minute)

    later = _review("")
    assert later.returncode == 0
    assert later.stdout.startswith("Nothing is due now; the next quiz is due ")


def test_review_stops_at_q_and_at_the_end_of_input(app: SanApp) -> None:
    ids = _quizzes_of_today(app)
    stopped = _review("\nq\n")
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.rstrip().endswith("Reviewed 0: 0 again, 0 hard, 0 good, 0 easy")
    assert all(app.quizzes.reviews(quiz_id) == [] for quiz_id in ids)

    ended = _review("\n2\n\n")  # one Hard, then the input ends before the second rating
    assert ended.returncode == 0, ended.stderr
    assert "Traceback" not in ended.stderr
    assert ended.stdout.rstrip().endswith("Reviewed 1: 0 again, 1 hard, 0 good, 0 easy")
    assert sum(len(app.quizzes.reviews(quiz_id)) for quiz_id in ids) == 1
    assert app.quizzes.due_counts().new == len(ids) - 1


def test_q_stops_at_every_prompt(app: SanApp) -> None:
    """Issue 24: q at the O/X prompt was refused ("Type O (true), X (false)…") though the README says q
    stops; and q at a short-answer prompt was taken for the answer."""
    _quizzes_of_today(app)
    due = app.quizzes.due(limit=100)
    first_ox = next(n for n, quiz in enumerate(due) if quiz.quiz_type is QuizType.OX)
    stopped = _review("\n3\n" * first_ox + "q\n")  # Good until the first true/false statement, then q
    assert stopped.returncode == 0, stopped.stderr
    assert "Type O (true), X (false)" not in stopped.stdout
    assert stopped.stdout.count("Answer: ") == first_ox  # the O/X quiz's answer was not shown
    assert stopped.stdout.rstrip().endswith(f"Reviewed {first_ox}: 0 again, 0 hard, {first_ox} good, 0 easy")

    short = next(quiz for quiz in app.quizzes.due(limit=100) if quiz.quiz_type is not QuizType.OX)
    order = [quiz.id for quiz in app.quizzes.due(limit=100)]
    before = order.index(short.id)
    at_answer = _review("\n3\n" * before + "Q\n")  # q at "Your answer": stops too, in either case
    assert at_answer.stdout.count("Answer: ") == before  # "Q" was not taken for the answer
    assert at_answer.stdout.rstrip().endswith(f"Reviewed {before}: 0 again, 0 hard, {before} good, 0 easy")


def test_review_with_no_quizzes_says_how_to_make_them(data_dir: Path) -> None:
    result = _review("")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No quizzes yet: `san quiz generate [DATE]`")
    with open_app(data_dir, kind="cli", lock=False, log_to_stderr=False) as app:
        assert app.quizzes.due_counts().total == 0
