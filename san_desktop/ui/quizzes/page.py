"""The Quizzes page: recall quizzes reviewed with Anki's habits. The due counts (new · learning · review), then
one quiz at a time (``QuizCard``: question first, Space or Enter for the answer, keys 1-4 to rate); each
answer is written, and the next due quiz and the new counts read, off the GUI thread. The quiz shown can be
suspended, edited or deleted; when nothing is due any more, a summary of the session (``NothingDue``)."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QStackedWidget, QVBoxLayout, QWidget

from san_desktop.app import Changed, Changes
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.services.quizzes import QuizView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.quizzes.card import QuizCard, text_label
from san_desktop.ui.quizzes.edit_dialog import QuizEditDialog
from san_desktop.ui.quizzes.nothing_due import NothingDue
from san_desktop.ui.quizzes.queue import QueueState, counts_html, load_queue, next_due_text, summary_text

MESSAGE_MS = 8000  # a passing message (suspended, deleted) clears itself after this
COME_BACK_MS = 3_600_000  # with nothing due, the page looks again when the next quiz falls due within this


class QuizzesPage(QWidget):
    """Signals:
    open_card(str): the user asked to see the card a quiz was made from.
    """

    open_card = Signal(str)

    def __init__(
        self,
        context: AppContext,
        parent: QWidget | None = None,
        *,
        ask_to_delete: Callable[[QuizView], bool] | None = None,
    ) -> None:
        """``ask_to_delete``: whether a quiz may be deleted (by default a question to the person)."""
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._state: QueueState | None = None
        self._busy = False  # an answer, a suspension or a deletion is being written
        self._token = 0  # the newest load; older ones that come back late are dropped
        self._last_card: str | None = None  # the card of the quiz just answered (its sibling waits)
        self._session: Counter[int] = Counter()  # ratings given since the queue was last empty
        self._summary = ""
        self.edit_dialog: QuizEditDialog | None = None
        self._may_delete = ask_to_delete or self._ask_to_delete

        self.counts = text_label(rich=True)
        self.counts.setWordWrap(False)
        self.message = text_label(rich=True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.card = QuizCard()
        self.review_view: QWidget = self.card
        self.nothing_due = NothingDue(context)
        self.stack = QStackedWidget()
        self.stack.setMaximumWidth(780)  # lines a reader's eye can follow
        self.stack.addWidget(self.card)
        self.stack.addWidget(self.nothing_due)
        self.stack.setCurrentWidget(self.nothing_due)
        header = QHBoxLayout()
        header.addWidget(QLabel("<h2>Quizzes</h2>"))
        header.addStretch(1)
        header.addWidget(self.counts)
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(self.stack, 8)
        centred.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.message)
        layout.addLayout(centred, 1)

        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self.message.clear)
        self._come_back = QTimer(self)  # a quiz answered a moment ago falls due again: show it then
        self._come_back.setSingleShot(True)
        self._come_back.timeout.connect(self._on_come_back_timeout)
        self.card.rated.connect(self.rate)
        self.card.open_card.connect(self.open_card)
        self.card.suspend_requested.connect(self.suspend_current)
        self.card.edit_requested.connect(self.edit_current)
        self.card.delete_requested.connect(self.delete_current)
        self.message.linkActivated.connect(self._on_message_link_activated)
        context.hub.changed.connect(self._on_hub_changed)

    @property
    def quiz(self) -> QuizView | None:
        """The quiz shown (None when nothing is due)."""
        return self.card.quiz if self.stack.currentWidget() is self.review_view else None

    # --- the queue ----------------------------------------------------------------------------

    def refresh(self, *, keep_current: bool = True) -> None:
        """Read the counts and the quiz to show; the one shown stays while it is still due."""
        self._token += 1
        token = self._token
        shown = self.quiz
        keep = shown.id if keep_current and shown is not None else None
        avoid = self._last_card
        self._context.ops.run(
            lambda: load_queue(self._app.quizzes, keep, avoid), lambda state: self._loaded(token, state), self.say
        )

    def _loaded(self, token: int, state: QueueState) -> None:
        if token != self._token:
            return  # a newer load was asked for (an answer was written meanwhile)
        self._state = state
        self.counts.setText(counts_html(state.counts))
        self._come_back.stop()
        if state.quiz is None:
            if self._session:
                self._summary = summary_text(self._session)
                self._session.clear()
            self.card.clear()
            self.nothing_due.show_queue(
                True, self._summary, next_due_text(state.next_due, state.now), any_quizzes=state.next_due is not None
            )
            self.stack.setCurrentWidget(self.nothing_due)
            if state.next_due is not None and state.now is not None:
                wait_ms = int((state.next_due - state.now).total_seconds() * 1000) + 500
                if wait_ms <= COME_BACK_MS:
                    self._come_back.start(max(wait_ms, 1000))
            return
        self._summary = ""
        self.stack.setCurrentWidget(self.review_view)
        self.card.show_quiz(state.quiz, state.intervals)

    # --- answering ----------------------------------------------------------------------------

    def rate(self, rating: int) -> None:
        """Answer the quiz shown: 1 Again, 2 Hard, 3 Good, 4 Easy."""
        quiz = self.quiz
        if quiz is None or not self.card.revealed or self._busy:
            return
        duration_ms = self.card.duration_ms()

        def answered(_view: QuizView) -> None:
            self._session[rating] += 1
            self._last_card = quiz.card_id
            self._next()

        self._write(lambda: self._app.answer_quiz(quiz.id, rating, duration_ms), answered)

    def suspend_current(self) -> None:
        quiz = self.quiz
        if quiz is None or self._busy:
            return

        def suspended(_view: QuizView) -> None:
            self.say(f"Quiz suspended: it stays out of the queue. <a href='unsuspend:{quiz.id}'>Undo</a>")
            self._next()

        self._write(lambda: self._app.suspend_quiz(quiz.id), suspended)

    def delete_current(self) -> None:
        quiz = self.quiz
        if quiz is None or self._busy or not self._may_delete(quiz):
            return

        def deleted(_changes: Changes) -> None:
            self.say("Quiz deleted.")
            self._next()

        self._write(lambda: self._app.delete_quiz(quiz.id), deleted)

    def edit_current(self) -> QuizEditDialog | None:
        """The edit dialog of the quiz shown (window-modal, not blocking: the page goes on refreshing)."""
        quiz = self.quiz
        if quiz is None:
            return None
        dialog = QuizEditDialog(self._context, quiz, self)
        dialog.saved.connect(self._on_edit_dialog_saved)
        dialog.finished.connect(dialog.deleteLater)
        self.edit_dialog = dialog
        dialog.open()
        return dialog

    def _write(self, call: Callable[[], Changes | Changed[Any]], done: Callable[[Any], None]) -> None:
        """A write about the quiz shown; the card takes no key or click until it is done."""
        self._busy = True
        self.card.set_busy(True)
        self._context.ops.write(call, done, self._refused, initiator=self)

    def _next(self) -> None:
        self._busy = False
        self.card.clear()
        self.refresh(keep_current=False)

    def _refused(self, exc: SanError) -> None:
        """A write was refused (the quiz was deleted meanwhile, say): tell it, and show what is due now."""
        self.say(exc)
        self._next()

    def _ask_to_delete(self, quiz: QuizView) -> bool:
        answer = QMessageBox.question(
            self,
            "Delete quiz",
            f"Delete this quiz and its review history? The card stays.\n\n{quiz.question}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    # --- what the window's shortcuts call -----------------------------------------------------

    def focus_search(self) -> bool:
        return False  # one quiz at a time: nothing to search

    def refresh_page(self) -> None:
        self.refresh()

    def delete_selected(self) -> None:
        """Nothing: deleting a quiz (its review history) is asked for on the quiz, and confirmed there."""

    # --- slots --------------------------------------------------------------------------------

    def say(self, text: str | SanError, ms: int = MESSAGE_MS) -> None:
        """A passing message: rich text written here, or an error (escaped)."""
        self.message.setText(html.escape(str(text)) if isinstance(text, SanError) else text)
        self._message_timer.start(ms)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()  # quizzes fall due with time, not only with changes

    def _on_hub_changed(self, changes: Changes, initiator: object) -> None:
        if initiator is self or not self.isVisible():
            return  # this page reads the queue after its own writes, and whenever it is shown
        made = any(
            job.job_type is JobType.RECALL_QUIZ_GENERATION and job.status is JobStatus.COMPLETED for job in changes.jobs
        )
        # a scrap deleted or restored (not one whose job moved on) takes its card's quizzes out or back
        if changes.quizzes or made or changes.scraps - changes.job_scraps or changes.library:
            self.refresh()

    def _on_come_back_timeout(self) -> None:
        if self.isVisible():
            self.refresh()

    def _on_edit_dialog_saved(self, view: QuizView) -> None:
        state = self._state
        if self.quiz is not None and self.quiz.id == view.id:
            self.card.show_quiz(view, state.intervals if state is not None else {})

    def _on_message_link_activated(self, link: str) -> None:
        kind, _sep, quiz_id = link.partition(":")
        if kind == "unsuspend" and quiz_id:
            self.message.clear()
            self._context.ops.write(
                lambda: self._app.suspend_quiz(quiz_id, False), lambda _view: self.refresh(), self.say, initiator=self
            )
