"""Editing one recall quiz: its question, its answer (true or false for an OX statement), the other answers
accepted (comma-separated) and its explanation. Saved off the GUI thread; a refusal is shown in the dialog."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ai.quizzes import OX_FALSE, OX_TRUE
from san_desktop.core.enums import QuizType
from san_desktop.core.errors import SanError
from san_desktop.services.quizzes import QuizView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import tone_style


def split_accepted(text: str) -> list[str]:
    """Accepted answers as typed: comma-separated, blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


class QuizEditDialog(QDialog):
    """Signals:
    saved(object): the edited quiz (a ``QuizView``), once it is stored.
    """

    saved = Signal(object)

    def __init__(self, context: AppContext, quiz: QuizView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit quiz")
        self.resize(560, 380)
        self._context = context
        self._app = context.app
        self.quiz = quiz
        ox = quiz.quiz_type is QuizType.OX

        self.question = QPlainTextEdit(quiz.question)
        self.question.setTabChangesFocus(True)
        self.truth = QComboBox()
        self.truth.addItem("True (O)", OX_TRUE)
        self.truth.addItem("False (X)", OX_FALSE)
        self.truth.setCurrentIndex(0 if quiz.answer != OX_FALSE else 1)
        self.answer = QLineEdit(quiz.answer)
        self.accepted_answers = QLineEdit(", ".join(quiz.accepted))
        self.accepted_answers.setPlaceholderText("other answers that count, separated by commas")
        self.explanation = QPlainTextEdit(quiz.explanation)
        self.explanation.setTabChangesFocus(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet(tone_style("error"))

        form = QFormLayout()
        form.addRow("Statement:" if ox else "Question:", self.question)
        if ox:
            form.addRow("Answer:", self.truth)
            self.answer.setVisible(False)
            self.accepted_answers.setVisible(False)
        else:
            form.addRow("Answer:", self.answer)
            form.addRow("Also accepted:", self.accepted_answers)
        form.addRow("Explanation:", self.explanation)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

    def save(self) -> None:
        quiz_id = self.quiz.id
        ox = self.quiz.quiz_type is QuizType.OX
        question = self.question.toPlainText()
        answer = str(self.truth.currentData()) if ox else self.answer.text()
        accepted = [] if ox else split_accepted(self.accepted_answers.text())
        explanation = self.explanation.toPlainText()
        self.buttons.setEnabled(False)

        def stored(view: QuizView) -> None:
            self.saved.emit(view)
            self.accept()

        def refused(exc: SanError) -> None:
            self.buttons.setEnabled(True)
            self.status.setText(str(exc))

        self._context.ops.write(
            lambda: self._app.edit_quiz(
                quiz_id, question=question, answer=answer, accepted=accepted, explanation=explanation
            ),
            stored,
            refused,
            initiator=self,
        )
