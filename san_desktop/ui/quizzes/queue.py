"""What the review page shows, read in one background call (``load_queue``), and how it words it: the due
counts, the next interval of each rating ("10 min", "3 d", "2.5 mo"), a session's summary, the next due time.
No widgets here."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from san_desktop.services.quizzes import RATING_NAMES, DueCounts, QuizNotFoundError, QuizService, QuizView
from san_desktop.ui.common.look import tone

LOOK_AHEAD = 2  # due quizzes read at once: the next, and the one after in case the next is a sibling


@dataclass(frozen=True)
class QueueState:
    """The review queue as one background call read it."""

    counts: DueCounts
    quiz: QuizView | None  # the quiz to show; None when nothing is due
    intervals: dict[int, timedelta] = field(default_factory=dict)  # of ``quiz``, per rating 1-4
    next_due: datetime | None = None  # when nothing is due: when the next quiz falls due
    now: datetime | None = None


def _pick(quizzes: QuizService, keep: str | None, avoid_card: str | None, now: datetime) -> QuizView | None:
    if keep is not None:
        try:
            current = quizzes.get(keep)
        except QuizNotFoundError:
            current = None  # deleted (or its card) meanwhile
        if current is not None and not current.suspended and current.due_at <= now:
            return current
    due = quizzes.due(limit=LOOK_AHEAD, now=now)
    # Anki buries siblings: the other quiz of the card just answered would give its answer away
    return next((quiz for quiz in due if quiz.card_id != avoid_card), due[0] if due else None)


def load_queue(quizzes: QuizService, keep: str | None = None, avoid_card: str | None = None) -> QueueState:
    """The due counts and the quiz to show (``keep``, the one shown, while it is still due; else the next,
    preferably not of ``avoid_card``) with its intervals, all as of one moment. Runs off the GUI thread."""
    now = quizzes.clock()
    for _attempt in range(2):
        counts = quizzes.due_counts(now)
        quiz = _pick(quizzes, keep, avoid_card, now)
        if quiz is None:
            upcoming = quizzes.all(suspended=False, limit=1)
            return QueueState(counts, None, next_due=upcoming[0].due_at if upcoming else None, now=now)
        try:
            return QueueState(counts, quiz, quizzes.intervals(quiz.id, now), now=now)
        except QuizNotFoundError:
            keep = None  # deleted between the two reads: take the next one
    return QueueState(quizzes.due_counts(now), None, now=now)


def counts_html(counts: DueCounts) -> str:
    """New · Learning · Review in Anki's colours."""
    return (
        f"<span style='color:{tone('info').name()}'>New {counts.new}</span> · "
        f"<span style='color:{tone('error').name()}'>Learning {counts.learning}</span> · "
        f"<span style='color:{tone('success').name()}'>Review {counts.review}</span>"
    )


def _decimal(value: float, unit: str) -> str:
    shown = f"{value:.1f}".removesuffix(".0")
    return f"{shown} {unit}"


def interval_text(span: timedelta) -> str:
    """A rating button's interval, as Anki words it: "< 1 min", "10 min", "1.5 h", "3 d", "2.5 mo", "1.2 y"."""
    seconds = span.total_seconds()
    if seconds < 60:
        return "< 1 min"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    if seconds < 86_400:
        return _decimal(seconds / 3600, "h")
    days = seconds / 86_400
    if days < 30:
        return f"{round(days)} d"
    if days < 365:
        return _decimal(days / 30, "mo")
    return _decimal(days / 365, "y")


def summary_text(ratings: Counter[int]) -> str:
    """ "Reviewed 12 quizzes: 2 again, 1 hard, 8 good, 1 easy" (ratings given none of are left out)."""
    total = sum(ratings.values())
    parts = [f"{ratings[rating]} {name.lower()}" for rating, name in RATING_NAMES.items() if ratings[rating]]
    return f"Reviewed {total} quiz{'zes' if total != 1 else ''}: {', '.join(parts)}"


def next_due_text(due: datetime | None, now: datetime | None) -> str:
    """When the next quiz falls due, in local time."""
    if due is None or now is None:
        return ""
    local, today = due.astimezone(), now.astimezone().date()
    left = due - now
    soon = "a minute" if left < timedelta(seconds=90) else interval_text(left)
    if local.date() == today:
        return f"The next quiz is due at {local:%H:%M} (in {soon})."
    if local.date() == today + timedelta(days=1):  # (a minute before midnight, too: how soon is still worth saying)
        return f"The next quiz is due tomorrow at {local:%H:%M} (in {soon})."
    return f"The next quiz is due on {local:%Y-%m-%d}."
