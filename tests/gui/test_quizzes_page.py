"""The Quizzes page: due counts, the question first, Space or Enter for the answer (a typed short answer
compared as a hint), keys 1-4 to rate with each button's interval, the next quiz and the new counts; suspend,
edit, delete, the source card, a session's summary, generating today's quizzes; the daily reminder."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QPushButton
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import QuizState, QuizType
from san_desktop.core.settings import SETTINGS_FILE
from san_desktop.services.quizzes import QuizNotFoundError, QuizView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow
from san_desktop.ui.quizzes.nothing_due import NONE_DUE, NONE_YET
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.quizzes.queue import interval_text, next_due_text, summary_text
from san_desktop.ui.quizzes.reminder import QuizReminder
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.window.tray import Tray
from tests.support.clock import FakeClock
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import quizzes_of_today

# Showing a top-level widget on the offscreen platform makes Qt warn about size hints it cannot pass on;
# the window of the reminder tests has a tray icon (the platform has none) and cannot be raised.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "systemTrayWindowChanged", "does not support raise")


def _suspend_all(app: SanApp, quiz_type: QuizType) -> None:
    for quiz in app.quizzes.all():
        if quiz.quiz_type is quiz_type:
            app.quizzes.suspend(quiz.id)


def _counts(page: QuizzesPage) -> str:
    return re.sub(r"<[^>]+>", "", page.counts.text())


def _shown_page(
    qtbot: QtBot, context: AppContext, ask_to_delete: Callable[[QuizView], bool] | None = None
) -> QuizzesPage:
    page = QuizzesPage(context, ask_to_delete=ask_to_delete)
    qtbot.addWidget(page)
    page.resize(900, 640)
    page.show()
    qtbot.waitExposed(page)
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page, timeout=5_000)  # its keys are window-wide
    return page


def _revealed(page: QuizzesPage) -> bool:
    return page.card.revealed


def _moved_on(page: QuizzesPage, quiz_id: str) -> bool:
    """Another quiz is shown, or none is due (not the moment between: the card is cleared while the next
    one loads)."""
    if page.quiz is not None:
        return page.quiz.id != quiz_id
    return page.nothing_due.isVisibleTo(page)


def _quiz_after(page: QuizzesPage, quiz_id: str) -> bool:
    return page.quiz is not None and page.quiz.id != quiz_id


def test_space_reveals_key_3_rates_good_the_next_quiz_appears_and_the_counts_update(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:3])
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: _counts(page) == "New 6 · Learning 0 · Review 0", timeout=5_000)
    first = page.quiz
    assert first is not None
    assert page.card.question.isVisibleTo(page)
    assert not page.card.answer_box.isVisibleTo(page)  # the question first

    qtbot.keyClick(page, Qt.Key.Key_Space)

    assert _revealed(page)
    assert page.card.answer_box.isVisibleTo(page)
    assert first.card_title in page.card.source.text()
    assert page.card.explanation.text() == first.explanation
    # a new quiz: FSRS's learning steps for Again and Good, Easy graduates it at once
    assert page.card.rate_buttons[1].text() == "Again\n1 min"
    assert page.card.rate_buttons[3].text() == "Good\n10 min"
    assert page.card.rate_buttons[4].text().endswith(" d")

    qtbot.keyClick(page, Qt.Key.Key_3)

    qtbot.waitUntil(lambda: _quiz_after(page, first.id), timeout=5_000)
    assert _counts(page) == "New 5 · Learning 0 · Review 0"  # Good on a new quiz: learning, due in 10 min
    ((rating, _at, state_before, due_after),) = app.quizzes.reviews(first.id)
    assert (rating, state_before) == (3, QuizState.NEW)
    assert app.quizzes.get(first.id).state is QuizState.LEARNING
    assert due_after > app.clock()
    assert not _revealed(page)  # the next one, question first
    assert page.quiz is not None
    assert page.quiz.card_id != first.card_id  # its sibling would give the answer away: it waits


def test_a_typed_short_answer_is_compared_with_the_accepted_answers(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:2])
    _suspend_all(app, QuizType.OX)
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    first = page.quiz
    assert first is not None
    assert first.quiz_type is QuizType.SHORT_ANSWER
    assert page.card.kind.text() == "Fill in the blank"
    assert "_____" in page.card.question.text()
    assert page.card.typed.hasFocus()

    qtbot.keyClicks(page.card.typed, f"  {first.answer.upper()}. ")  # case, spaces, punctuation do not count
    qtbot.keyClick(page.card.typed, Qt.Key.Key_3)  # typed into the answer, not a rating
    assert page.card.typed.text().endswith("3")
    assert not _revealed(page)
    page.card.typed.backspace()
    qtbot.keyClick(page.card.typed, Qt.Key.Key_Return)

    assert _revealed(page)
    assert page.card.hint.text() == "✓ Your answer matches"
    assert f"<u>{first.answer}</u>" in page.card.question.text()  # the blank filled in
    qtbot.keyClick(page, Qt.Key.Key_4)
    qtbot.waitUntil(lambda: _quiz_after(page, first.id), timeout=5_000)

    second = page.quiz
    assert second is not None
    qtbot.keyClicks(page.card.typed, "no idea")
    assert page.card.typed.text() == "no idea"  # Space typed in the answer is a space, not "show"
    assert not _revealed(page)
    qtbot.keyClick(page.card.typed, Qt.Key.Key_Return)
    assert page.card.hint.text() == f"Your answer: no idea — the card says: {second.answer}"
    page.card.rate_buttons[1].click()  # the learner still rates
    qtbot.waitUntil(lambda: app.quizzes.reviews(second.id) != [], timeout=5_000)
    assert app.quizzes.reviews(second.id)[0][0] == 1


def test_suspend_takes_the_quiz_out_of_the_queue_and_undo_brings_it_back(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:2])
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: _counts(page) == "New 4 · Learning 0 · Review 0", timeout=5_000)
    first = page.quiz
    assert first is not None

    page.card.suspend_button.click()

    qtbot.waitUntil(lambda: _quiz_after(page, first.id), timeout=5_000)
    assert _counts(page) == "New 3 · Learning 0 · Review 0"
    assert app.quizzes.get(first.id).suspended
    assert first.id not in [quiz.id for quiz in app.quizzes.due()]
    assert app.quizzes.reviews(first.id) == []  # suspending is no answer
    assert "suspended" in page.message.text()

    page.message.linkActivated.emit(f"unsuspend:{first.id}")
    qtbot.waitUntil(lambda: _counts(page) == "New 4 · Learning 0 · Review 0", timeout=5_000)
    assert not app.quizzes.get(first.id).suspended


def test_edit_changes_the_quiz_shown_and_refuses_an_empty_answer(
    qtbot: QtBot, context: AppContext, app: SanApp
) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    _suspend_all(app, QuizType.OX)
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    quiz = page.quiz
    assert quiz is not None
    dialog = page.edit_current()
    assert dialog is not None

    dialog.answer.setText("  ")
    dialog.save()
    qtbot.waitUntil(lambda: dialog.status.text() != "", timeout=5_000)
    assert dialog.status.text() == "A quiz needs a question and an answer."
    assert dialog.isVisible()

    dialog.question.setPlainText("The log keeps new pages apart until a _____ copies them back.")
    dialog.answer.setText("checkpoint")
    dialog.accepted_answers.setText("checkpointing, , a checkpoint")
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):
        dialog.save()

    stored = app.quizzes.get(quiz.id)
    assert stored.question == "The log keeps new pages apart until a _____ copies them back."
    assert stored.accepted == ("checkpointing", "a checkpoint")
    assert page.card.question.text() == "The log keeps new pages apart until a _____ copies them back."
    qtbot.keyClicks(page.card.typed, "a checkpoint")
    qtbot.keyClick(page.card.typed, Qt.Key.Key_Return)
    assert page.card.hint.text() == "✓ Your answer matches"


def test_delete_asks_first_and_then_the_quiz_is_gone(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:2])
    asked: list[str] = []
    answers = [False, True]  # no, then yes

    def answer(shown: QuizView) -> bool:
        asked.append(shown.id)
        return answers.pop(0)

    page = _shown_page(qtbot, context, ask_to_delete=answer)
    qtbot.waitUntil(lambda: _counts(page) == "New 4 · Learning 0 · Review 0", timeout=5_000)
    quiz = page.quiz
    assert quiz is not None
    page.card.delete_button.click()
    assert asked == [quiz.id]
    assert app.quizzes.get(quiz.id) == quiz

    page.card.delete_button.click()
    assert asked == [quiz.id, quiz.id]
    qtbot.waitUntil(lambda: _quiz_after(page, quiz.id), timeout=5_000)
    assert _counts(page) == "New 3 · Learning 0 · Review 0"
    with pytest.raises(QuizNotFoundError):
        app.quizzes.get(quiz.id)


def test_the_last_answer_ends_the_session_with_its_summary(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    for key in (Qt.Key.Key_1, Qt.Key.Key_3):  # Again brings it back in a minute: not due now
        shown = page.quiz
        assert shown is not None
        page.card.reveal()
        qtbot.keyClick(page, key)
        qtbot.waitUntil(partial(_moved_on, page, shown.id), timeout=5_000)

    assert page.quiz is None
    assert _counts(page) == "New 0 · Learning 0 · Review 0"
    assert page.nothing_due.isVisibleTo(page)
    assert page.nothing_due.summary.text() == "Reviewed 2 quizzes: 1 again, 1 good"
    assert page.nothing_due.title.text() == NONE_DUE
    # the one answered Again ("tomorrow" when the test runs in the last minute of a day)
    assert re.fullmatch(
        r"The next quiz is due (tomorrow )?at \d\d:\d\d \(in a minute\)\.", page.nothing_due.next_due.text()
    )


def test_the_next_due_time_says_how_soon_across_midnight_too() -> None:
    before_midnight = datetime(2026, 12, 5, 23, 59, 30).astimezone()  # (this machine's time zone)
    assert next_due_text(before_midnight + timedelta(minutes=1), before_midnight) == (
        "The next quiz is due tomorrow at 00:00 (in a minute)."
    )
    morning = before_midnight.replace(hour=9, minute=0, second=0)
    assert next_due_text(morning + timedelta(minutes=1), morning) == "The next quiz is due at 09:01 (in a minute)."
    assert next_due_text(before_midnight + timedelta(days=3), before_midnight) == "The next quiz is due on 2026-12-08."
    assert next_due_text(None, before_midnight) == ""


def test_a_quiz_answered_again_comes_back_question_first(
    qtbot: QtBot, context: AppContext, app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    _suspend_all(app, QuizType.OX)
    clock = FakeClock(datetime.now(UTC))
    monkeypatch.setattr(app.quizzes, "clock", clock)
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    quiz = page.quiz
    assert quiz is not None
    qtbot.keyClicks(page.card.typed, "no idea")
    qtbot.keyClick(page.card.typed, Qt.Key.Key_Return)
    qtbot.keyClick(page, Qt.Key.Key_1)
    qtbot.waitUntil(lambda: page.nothing_due.isVisibleTo(page), timeout=5_000)
    assert page.nothing_due.summary.text() == "Reviewed 1 quiz: 1 again"

    clock.advance(61)
    page.refresh()  # what the page does by itself when the quiz falls due (or whenever it is shown)

    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    again = page.quiz
    assert again is not None
    assert again.id == quiz.id
    assert _counts(page) == "New 0 · Learning 1 · Review 0"
    assert not _revealed(page)
    assert page.card.typed.text() == ""
    assert not page.card.typed.isReadOnly()
    assert not page.nothing_due.isVisibleTo(page)


def test_a_day_without_cards_says_why_no_quizzes_can_be_made(qtbot: QtBot, context: AppContext) -> None:
    page = _shown_page(qtbot, context)
    qtbot.waitUntil(lambda: page.nothing_due.title.text() == NONE_YET, timeout=5_000)  # a fresh start
    assert _counts(page) == "New 0 · Learning 0 · Review 0"

    page.nothing_due.generate_button.click()

    qtbot.waitUntil(lambda: "no cards from" in page.nothing_due.generate_state.text(), timeout=5_000)
    assert page.nothing_due.generate_state.text() == (
        f"There are no cards from {context.app.til.today()}: nothing to make quizzes from."
    )
    assert page.nothing_due.generate_button.isEnabled()


def test_generate_for_today_makes_the_quizzes_and_they_appear(
    qtbot: QtBot, live_context: AppContext, app: SanApp
) -> None:
    for text in QUIZ_TEXTS[:2]:
        app.capture_text(text)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    qtbot.waitUntil(lambda: len(app.cards.list_cards()) == 2, timeout=20_000)
    page = _shown_page(qtbot, live_context)
    qtbot.waitUntil(lambda: page.nothing_due.generate_button.isVisibleTo(page), timeout=5_000)

    page.nothing_due.generate_button.click()

    qtbot.waitUntil(lambda: page.quiz is not None, timeout=20_000)  # the job's end is announced: read again
    assert _counts(page) == "New 4 · Learning 0 · Review 0"
    qtbot.waitUntil(lambda: page.nothing_due.generate_state.text().startswith("Made"), timeout=5_000)
    assert page.nothing_due.generate_state.text() == f"Made 4 quizzes from the cards of {app.til.today()}."


def test_open_card_shows_the_source_card_on_the_cards_page(qtbot: QtBot, live_context: AppContext, app: SanApp) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    window = MainWindow(live_context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("quizzes")
    page = window.quizzes
    qtbot.waitUntil(lambda: page.quiz is not None, timeout=5_000)
    quiz = page.quiz
    assert quiz is not None
    page.card.reveal()

    page.card.open_card_button.click()

    assert window.current_page_key() == "cards"
    qtbot.waitUntil(lambda: quiz.card_title in window.cards.detail.toPlainText(), timeout=5_000)


def test_intervals_and_summaries_read_as_anki_words_them() -> None:
    from collections import Counter
    from datetime import timedelta

    spans = [timedelta(seconds=30), timedelta(minutes=1), timedelta(seconds=330), timedelta(hours=1.5)]
    spans += [timedelta(days=3), timedelta(days=75), timedelta(days=438)]
    assert [interval_text(span) for span in spans] == ["< 1 min", "1 min", "6 min", "1.5 h", "3 d", "2.5 mo", "1.2 y"]
    ratings = Counter({1: 2, 2: 1, 3: 8, 4: 1})
    assert summary_text(ratings) == "Reviewed 12 quizzes: 2 again, 1 hard, 8 good, 1 easy"
    assert summary_text(Counter({3: 1})) == "Reviewed 1 quiz: 1 good"


# --- the daily reminder ----------------------------------------------------------------------


def _reminder_time(app: SanApp, at: str, *, do_not_disturb: bool = False) -> None:
    settings = app.settings
    app.save_settings(
        replace(
            settings,
            quiz=replace(settings.quiz, reminder_time=at),
            notifications=replace(settings.notifications, do_not_disturb=do_not_disturb),
        )
    )


@pytest.fixture
def reminding_window(
    qtbot: QtBot, live_context: AppContext, app: SanApp, monkeypatch: pytest.MonkeyPatch
) -> tuple[MainWindow, list[tuple[str, str]]]:
    """The window on a platform with a tray, six quizzes due, the reminder off until a test sets its time
    (the real morning may have come), and the tray's balloons observed."""
    quizzes_of_today(app, QUIZ_TEXTS[:3])
    _reminder_time(app, "")
    monkeypatch.setattr(Tray, "available", staticmethod(lambda: True))
    main = MainWindow(live_context)
    qtbot.addWidget(main)
    shown: list[tuple[str, str]] = []
    main.tray.icon.showMessage = lambda title, text, *_rest: shown.append((title, text))  # type: ignore[method-assign]
    return main, shown


def test_the_reminder_tells_once_a_day_at_its_time_and_opens_the_quizzes(
    qtbot: QtBot, reminding_window: tuple[MainWindow, list[tuple[str, str]]], app: SanApp
) -> None:
    window, shown = reminding_window
    reminder = window.quiz_reminder
    _reminder_time(app, "09:00")
    clock = [datetime(2026, 12, 1, 8, 59)]
    reminder.now = lambda: clock[0]

    reminder.check()  # what the minute's timer does
    assert reminder.reminded_on is None
    clock[0] = datetime(2026, 12, 1, 9, 0)
    reminder.check()
    qtbot.waitUntil(lambda: bool(shown), timeout=5_000)
    assert shown == [("SAN Desktop", "6 quizzes due")]
    assert "6 quizzes due" in window.notice_label.text()
    for minute in (1, 2):  # later the same day: told already
        clock[0] = datetime(2026, 12, 1, 9, minute)
        reminder.check()
    assert reminder.reminded_on == datetime(2026, 12, 1).date()

    window.tray.icon.messageClicked.emit()
    assert window.current_page_key() == "quizzes"

    window.show_page("inbox")
    clock[0] = datetime(2026, 12, 2, 9, 30)  # the next morning
    reminder.check()
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=5_000)


def test_no_reminder_interrupts_a_review(
    qtbot: QtBot,
    reminding_window: tuple[MainWindow, list[tuple[str, str]]],
    app: SanApp,
    live_context: AppContext,
) -> None:
    window, shown = reminding_window
    window.show()
    window.show_page("quizzes")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    _reminder_time(app, "09:00")
    window.quiz_reminder.now = lambda: datetime(2026, 12, 1, 9, 0)

    window.quiz_reminder.check()

    qtbot.waitUntil(lambda: window.quiz_reminder.reminded_on is not None, timeout=5_000)
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    assert shown == []
    assert window.notice_label.text() == ""


def test_do_not_disturb_silences_the_reminder(
    qtbot: QtBot,
    reminding_window: tuple[MainWindow, list[tuple[str, str]]],
    app: SanApp,
    live_context: AppContext,
) -> None:
    window, shown = reminding_window
    reminder = window.quiz_reminder
    _reminder_time(app, "09:00", do_not_disturb=True)
    reminder.now = lambda: datetime(2026, 12, 1, 9, 0)

    reminder.check()

    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)  # whatever it started has ended
    assert reminder.reminded_on == datetime(2026, 12, 1).date()
    assert shown == []
    assert window.notice_label.text() == ""


def test_started_after_the_reminder_time_it_reminds_at_once(qtbot: QtBot, context: AppContext, app: SanApp) -> None:
    quizzes_of_today(app, QUIZ_TEXTS[:1])
    _reminder_time(app, "07:30")
    told: list[str] = []
    reminder = QuizReminder(app, context.ops, lambda notice: told.append(f"{notice.page}: {notice.text}"))
    reminder.now = lambda: datetime(2026, 12, 1, 21, 15)

    reminder.start()

    qtbot.waitUntil(lambda: bool(told), timeout=5_000)
    reminder.stop()
    assert told == ["quizzes: 2 quizzes due"]


# --- settings --------------------------------------------------------------------------------


def _save_button(dialog: SettingsDialog) -> QPushButton:
    button = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)  # type: ignore[union-attr]
    assert button is not None
    return button


def test_the_quiz_settings_are_saved(qtbot: QtBot, context: AppContext) -> None:
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    assert dialog.retention.value() == pytest.approx(0.9)
    assert dialog.quiz_after_til.isChecked()
    assert dialog.reminder_time.text() == "09:00"
    dialog.retention.setValue(0.5)  # below the range: held at its edge
    assert dialog.retention.value() == pytest.approx(0.7)
    dialog.retention.setValue(0.85)
    dialog.quiz_after_til.setChecked(False)
    dialog.reminder_time.setText("7:5")
    qtbot.waitUntil(lambda: not context.ops.busy, timeout=5_000)  # the keyring looked at when it opened

    _save_button(dialog).click()
    assert "reminder_time must be a time of day as HH:MM" in dialog.quiz_status.text()
    assert not context.ops.busy  # nothing is being saved

    dialog.reminder_time.setText(" 07:30 ")
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):
        _save_button(dialog).click()
    saved = json.loads((context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))["quiz"]
    assert saved == {"desired_retention": 0.85, "generate_after_til": False, "reminder_time": "07:30"}
    assert context.app.settings.quiz.reminder_time == "07:30"


def test_an_empty_reminder_time_turns_the_reminder_off(qtbot: QtBot, context: AppContext) -> None:
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    dialog.reminder_time.clear()
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):
        _save_button(dialog).click()
    assert json.loads((context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))["quiz"]["reminder_time"] == ""
    reminder = QuizReminder(context.app, context.ops, lambda _notice: None)
    assert not reminder.due_time_reached(datetime(2026, 12, 1, 23, 59))
