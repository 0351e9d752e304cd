"""``san quiz ...``: recall quizzes — a day's generation, the due queue, an answer, a review session."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from san_desktop.cli.common import add_list_options, open_library, print_json, print_rows, rows_wanted, say_left_out
from san_desktop.core.enums import JOB_STATUS_NAMES

if TYPE_CHECKING:
    from san_desktop.app import SanApp
    from san_desktop.services.quizzes import QuizView

QUESTION_WIDTH = 60  # characters of a question in the `due` table (--json has all of it)
TITLE_WIDTH = 40
RATING_WORDS = ("again", "hard", "good", "easy")  # 1-4, as services.quizzes.RATINGS (not imported: SQLAlchemy)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    quiz = commands.add_parser("quiz", help="recall quizzes of your cards, scheduled by spaced repetition (FSRS)")
    sub = quiz.add_subparsers(dest="quiz_command", metavar="ACTION", required=True)
    generate = sub.add_parser(
        "generate", help="make a day's quizzes (today by default); the open app or `san jobs run` makes them"
    )
    generate.add_argument("date", nargs="?", metavar="DATE", help="YYYY-MM-DD in your time zone")
    generate.set_defaults(handler=cmd_generate)
    due = sub.add_parser(
        "due",
        help="how many quizzes are due (new, learning, review) and the first of them",
        description="How many quizzes are due, and the first of them (--json: {counts, quizzes}).",
    )
    add_list_options(due)
    due.set_defaults(handler=cmd_due)
    answer = sub.add_parser("answer", help="rate one quiz: again, hard, good or easy (or 1-4)")
    answer.add_argument("quiz_id", metavar="ID")
    answer.add_argument("rating", type=_rating, metavar="RATING", help="again | hard | good | easy")
    answer.set_defaults(handler=cmd_answer)
    review = sub.add_parser(
        "review",
        help="review the due quizzes in the terminal",
        description="For each due quiz: the question; type your answer (O or X for a true/false one) or just "
        "press Enter; then the answer, the explanation and the four ratings with their next intervals: "
        "1 Again, 2 Hard, 3 Good, 4 Easy (or the word); q stops. End of input ends the session too.",
    )
    review.set_defaults(handler=cmd_review)


def _rating(value: str) -> int:
    word = value.strip().casefold()
    if word in RATING_WORDS:
        return RATING_WORDS.index(word) + 1
    if word in ("1", "2", "3", "4"):
        return int(word)
    raise argparse.ArgumentTypeError(f"a rating is again, hard, good or easy (or 1-4), not {value!r}")


def _zone(app: SanApp) -> tzinfo:
    """The learner's time zone (the TIL setting; the system's when unset): all times are stored UTC."""
    from san_desktop.core.timeutil import local_zone

    return local_zone(app.settings.til.timezone)


def _local(value: datetime, zone: tzinfo) -> str:
    return value.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def interval(value: timedelta) -> str:
    """As Anki writes an interval on its buttons: <1m, 10m, 5h, 3d, 1.5mo, 2.1y."""
    seconds = value.total_seconds()
    if seconds < 60:
        return "<1m"
    for size, unit in ((365.25 * 86_400, "y"), (30.44 * 86_400, "mo")):
        if seconds >= size:
            return f"{seconds / size:.1f}".removesuffix(".0") + unit
    for size, unit in ((86_400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{round(seconds / size)}{unit}"
    return "<1m"  # (unreachable)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _type_name(quiz: QuizView) -> str:
    return "OX" if quiz.quiz_type.value == "OX" else "short"


def cmd_generate(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        day = args.date or app.til.today()
        job = app.generate_quizzes(day).value
    state = JOB_STATUS_NAMES[job.status].lower()
    print(f"Quizzes of {day}: job {job.id} is {state} (the open app or `san jobs run` runs it)")
    return 0


def cmd_due(args: argparse.Namespace) -> int:
    with open_library(args) as app:
        counts = app.quizzes.due_counts()
        quizzes = app.quizzes.due(limit=max(1, rows_wanted(args) or counts.total))
    due = f"Due: {counts.new} new, {counts.learning} learning, {counts.review} review"
    if args.json:  # the counts beside the quizzes, as before --limit came to every list
        shown = quizzes if args.limit is None else quizzes[: args.limit]
        summary = {"new": counts.new, "learning": counts.learning, "review": counts.review, "total": counts.total}
        print_json({"counts": summary, "quizzes": shown})
        say_left_out(len(shown), counts.total, "quiz", "quizzes")
        return 0
    print_rows(
        quizzes,
        args,
        headers=["ID", "TYPE", "STATE", "QUESTION", "CARD"],
        cells=lambda quiz: [
            quiz.id,
            _type_name(quiz),
            quiz.state.value.lower(),
            _one_line(quiz.question, QUESTION_WIDTH),
            _one_line(quiz.card_title, TITLE_WIDTH),
        ],
        empty=due,
        noun="quiz",
        plural="quizzes",
        total=counts.total,
        heading=f"{due}\n",
    )
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    from san_desktop.services.quizzes import RATING_NAMES

    with open_library(args) as app:
        view = app.answer_quiz(args.quiz_id, args.rating).value
        now, zone = app.clock(), _zone(app)
    print(
        f"{view.id}: {RATING_NAMES[args.rating]}; now {view.state.value.lower()}, due "
        f"{_local(view.due_at, zone)} (in {interval(view.due_at - now)})"
    )
    return 0


# --- the review session ---------------------------------------------------------------------------


class _EndOfSessionError(Exception):
    """The learner typed q (or the input ended)."""


STOP_WORDS = ("q", "quit")  # at every prompt: the README promises it


def _ask(prompt: str) -> str:
    """One line from standard input (without its newline); _EndOfSessionError at the end of the input
    or when the learner typed q."""
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        print()
        raise _EndOfSessionError
    line = line.rstrip("\r\n")
    if not sys.stdin.isatty():  # a terminal echoes what is typed; piped answers are shown as a transcript
        print(line)
    if line.strip().casefold() in STOP_WORDS:
        raise _EndOfSessionError
    return line


def _typed_answer(quiz: QuizView) -> str:
    if quiz.quiz_type.value != "OX":
        return _ask("Your answer (Enter shows it, q stops)> ").strip()
    while True:
        typed = _ask("O or X (Enter shows the answer, q stops)> ").strip()
        if typed.upper() in ("", "O", "X"):
            return typed.upper()
        print("  Type O (true), X (false), just press Enter, or q to stop.")


def _ask_rating() -> int:
    while True:
        typed = _ask("Rate 1-4 (q stops)> ").strip().casefold()
        try:
            return _rating(typed)
        except argparse.ArgumentTypeError:
            print("  Type 1 Again, 2 Hard, 3 Good, 4 Easy (or the word), or q to stop.")


def _show_answer(app: SanApp, quiz: QuizView, typed: str) -> None:
    from san_desktop.ai.quizzes import answer_matches
    from san_desktop.services.quizzes import RATING_NAMES

    also = f" (also accepted: {', '.join(quiz.accepted)})" if quiz.accepted else ""
    print(f"  Answer: {quiz.answer}{also}")
    if typed:
        verdict = "matches" if answer_matches(typed, quiz.answer, quiz.accepted) else "does not match"
        print(f"  Yours:  {typed} — {verdict}")
    if quiz.explanation:
        print(f"  {quiz.explanation}")
    intervals = app.quizzes.intervals(quiz.id)
    print("  " + "   ".join(f"{n} {RATING_NAMES[n]} {interval(intervals[n])}" for n in sorted(intervals)))


def cmd_review(args: argparse.Namespace) -> int:
    tally: Counter[int] = Counter()
    with open_library(args) as app:
        counts = app.quizzes.due_counts()
        if not counts.total:
            print(_nothing_due(app))
            return 0
        print(f"Due: {counts.new} new, {counts.learning} learning, {counts.review} review. q stops.")
        code = 0
        try:
            # the queue as it is now, one quiz at a time: a quiz rated Again comes back once it is due again
            while quizzes := app.quizzes.due(limit=1):
                _review_one(app, quizzes[0], tally)
        except _EndOfSessionError:
            pass
        except KeyboardInterrupt:
            print()
            code = 130
        print(_summary(tally))
    return code


def _review_one(app: SanApp, quiz: QuizView, tally: Counter[int]) -> None:
    from san_desktop.services.quizzes import QuizNotFoundError

    print()
    print(f"[{_type_name(quiz)} · {quiz.state.value.lower()}] {quiz.card_title}")
    print(f"  {quiz.question}")
    started = time.monotonic()
    typed = _typed_answer(quiz)
    try:
        _show_answer(app, quiz, typed)
        rating = _ask_rating()
        app.answer_quiz(quiz.id, rating, round((time.monotonic() - started) * 1000))
    except QuizNotFoundError:
        print("  (This quiz was deleted meanwhile: skipped.)")
        return
    tally[rating] += 1


def _summary(tally: Counter[int]) -> str:
    total = sum(tally.values())
    return f"Reviewed {total}: {tally[1]} again, {tally[2]} hard, {tally[3]} good, {tally[4]} easy"


def _nothing_due(app: SanApp) -> str:
    upcoming = app.quizzes.all(suspended=False, limit=1)
    if not upcoming:
        return "No quizzes yet: `san quiz generate [DATE]` makes a day's quizzes from its cards."
    return f"Nothing is due now; the next quiz is due {_local(upcoming[0].due_at, _zone(app))}."
