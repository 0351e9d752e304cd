"""One quiz under review: the question first (a short answer is typed into a field), Space or Enter for the
answer with the typed one compared as a hint, the explanation and the source card, and the four ratings
with the interval each would give (keys 1-4). A view: the page reads and writes."""

from __future__ import annotations

import html
import time
from datetime import timedelta

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from san_desktop.ai.quizzes import BLANK, OX_TRUE, answer_matches
from san_desktop.core.enums import QuizType
from san_desktop.services.quizzes import RATING_NAMES, QuizView
from san_desktop.ui.common.look import tone_style
from san_desktop.ui.quizzes.queue import interval_text

_MATCH = "success"
_MISMATCH = "warning"


def text_label(text: str = "", *, rich: bool = False, scale: float = 1.0) -> QLabel:
    """A wrapping label; plain text unless ``rich`` (then its caller escapes what it did not write)."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if scale != 1.0:
        font = QFont(label.font())
        font.setPointSizeF(font.pointSizeF() * scale)
        label.setFont(font)
    return label


class QuizCard(QWidget):
    """Signals:
    rated(int): a rating (1 Again … 4 Easy) was chosen for the quiz shown, by its button or key.
    open_card(str): the source card was asked for.
    suspend_requested(), edit_requested(), delete_requested(): for the quiz shown.
    """

    rated = Signal(int)
    open_card = Signal(str)
    suspend_requested = Signal()
    edit_requested = Signal()
    delete_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.quiz: QuizView | None = None
        self._intervals: dict[int, timedelta] = {}
        self._revealed = False
        self._busy = False  # its answer is being written
        self._shown_at = time.monotonic()

        self.kind = text_label()
        self.kind.setStyleSheet(tone_style("muted"))
        self.question = text_label(rich=True, scale=1.5)
        self.typed = QLineEdit()
        self.typed.setPlaceholderText("Type your answer, then press Enter")
        self.show_button = QPushButton("Show answer  (Space)")
        self.show_button.setMinimumSize(240, 36)
        self.answer = text_label(rich=True, scale=1.3)
        self.hint = text_label()
        self.explanation = text_label()
        self.source = text_label()
        self.source.setStyleSheet(tone_style("muted"))
        self.open_card_button = QPushButton("Open card")
        self.rate_buttons = {rating: QPushButton(name) for rating, name in RATING_NAMES.items()}
        self.suspend_button = QPushButton("Suspend")
        self.suspend_button.setToolTip("Keep this quiz out of the queue")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete…")

        self.answer_box = QWidget()
        answer_layout = QVBoxLayout(self.answer_box)
        answer_layout.setContentsMargins(0, 12, 0, 0)
        for label in (self.answer, self.hint, self.explanation):
            answer_layout.addWidget(label)
        source_row = QHBoxLayout()
        source_row.addWidget(self.source, 1)
        source_row.addWidget(self.open_card_button)
        answer_layout.addLayout(source_row)
        answer_layout.addSpacing(8)
        ratings = QHBoxLayout()
        for rating, button in self.rate_buttons.items():
            button.setMinimumHeight(44)
            button.setToolTip(f"{RATING_NAMES[rating]} (key {rating})")
            ratings.addWidget(button)
        answer_layout.addLayout(ratings)
        actions = QHBoxLayout()
        actions.addStretch(1)
        for button in (self.suspend_button, self.edit_button, self.delete_button):
            actions.addWidget(button)
        layout = QVBoxLayout(self)
        for widget in (self.kind, self.question, self.typed):
            layout.addWidget(widget)
        layout.addWidget(self.show_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(self.answer_box)
        layout.addStretch(1)
        layout.addLayout(actions)

        # Window-wide while the card shows; the answer field keeps the keys it types (a line edit overrides
        # shortcuts of printable keys), so only Enter leaves it.
        self._reveal_keys = [QShortcut(QKeySequence(key), self) for key in ("Space", "Return", "Enter")]
        for shortcut in self._reveal_keys:
            shortcut.activated.connect(self.reveal)
        self._reveal_keys[0].setWhatsThis("Show the answer")  # listed in Help (once, not for each key)
        self._rate_keys: list[QShortcut] = []
        for rating, button in self.rate_buttons.items():
            shortcut = QShortcut(QKeySequence(str(rating)), self)
            shortcut.activated.connect(lambda r=rating: self._rate(r))
            shortcut.setWhatsThis(f"Rate the answer: {RATING_NAMES[rating]}")
            button.clicked.connect(lambda _checked=False, r=rating: self._rate(r))
            self._rate_keys.append(shortcut)
        self.typed.returnPressed.connect(self.reveal)
        self.show_button.clicked.connect(self.reveal)
        self.open_card_button.clicked.connect(self._on_open_card_button_clicked)
        self.suspend_button.clicked.connect(self.suspend_requested)
        self.edit_button.clicked.connect(self.edit_requested)
        self.delete_button.clicked.connect(self.delete_requested)

    @property
    def revealed(self) -> bool:
        return self._revealed

    def duration_ms(self) -> int:
        """How long the question has been shown."""
        return int((time.monotonic() - self._shown_at) * 1000)

    def show_quiz(self, quiz: QuizView, intervals: dict[int, timedelta]) -> None:
        """Show ``quiz``: a new one from its question, the one shown (edited, or read again) as it stands."""
        if self.quiz is None or self.quiz.id != quiz.id:
            self._revealed = False
            self._shown_at = time.monotonic()
            self.typed.clear()
        self.quiz = quiz
        self._intervals = intervals
        self._render()

    def clear(self) -> None:
        """Forget the quiz shown: whatever comes next starts from its question, even the same quiz again."""
        self.quiz = None
        self._busy = False

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        if self.quiz is not None:
            self._render()

    def reveal(self) -> None:
        """Show the answer (Space or Enter)."""
        if self.quiz is None or self._revealed or self._busy:
            return
        self._revealed = True
        self._render()

    def _rate(self, rating: int) -> None:
        if self.quiz is not None and self._revealed and not self._busy:
            self.rated.emit(rating)

    def _render(self) -> None:
        quiz = self.quiz
        assert quiz is not None
        short = quiz.quiz_type is QuizType.SHORT_ANSWER
        revealed = self._revealed
        self.kind.setText("Fill in the blank" if short else "True or false?")
        question = html.escape(quiz.question)
        if short and revealed:
            question = question.replace(BLANK, f"<b><u>{html.escape(quiz.answer)}</u></b>")
        self.question.setText(question)
        self.typed.setVisible(short)
        self.typed.setReadOnly(revealed)
        self.show_button.setVisible(not revealed)
        self.answer_box.setVisible(revealed)
        if short:
            also = ", ".join(quiz.accepted)
            also = f"<br><small>Also accepted: {html.escape(also)}</small>" if also else ""
            self.answer.setText(f"Answer: <b>{html.escape(quiz.answer)}</b>{also}")
        else:
            self.answer.setText(f"Answer: <b>{'True (O)' if quiz.answer == OX_TRUE else 'False (X)'}</b>")
        self._show_hint(quiz)
        self.explanation.setText(quiz.explanation)
        self.explanation.setVisible(bool(quiz.explanation))
        self.source.setText(f"From the card: {quiz.card_title}")
        for rating, button in self.rate_buttons.items():
            after = self._intervals.get(rating)
            name = RATING_NAMES[rating]
            button.setText(f"{name}\n{interval_text(after)}" if after is not None else name)
        for button in (*self.rate_buttons.values(), self.suspend_button, self.edit_button, self.delete_button):
            button.setEnabled(not self._busy)
        for shortcut in self._reveal_keys:
            shortcut.setEnabled(not revealed and not self._busy)
        for shortcut in self._rate_keys:
            shortcut.setEnabled(revealed and not self._busy)
        if self.isVisible():
            if short and not revealed:
                self.typed.setFocus()
            elif self.typed.hasFocus():
                self.setFocus()  # the rating keys are not typed into the read-only answer

    def _show_hint(self, quiz: QuizView) -> None:
        typed = self.typed.text().strip()
        if quiz.quiz_type is not QuizType.SHORT_ANSWER or not typed or not self._revealed:
            self.hint.setVisible(False)
            return
        if answer_matches(typed, quiz.answer, quiz.accepted):
            self.hint.setText("✓ Your answer matches")
            self.hint.setStyleSheet(tone_style(_MATCH))
        else:
            self.hint.setText(f"Your answer: {typed} — the card says: {quiz.answer}")
            self.hint.setStyleSheet(tone_style(_MISMATCH))
        self.hint.setVisible(True)

    def _on_open_card_button_clicked(self) -> None:
        if self.quiz is not None:
            self.open_card.emit(self.quiz.card_id)
