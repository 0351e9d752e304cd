"""What the Quizzes page shows when no quiz is due: the summary of the session just ended, when the next
quiz falls due, and "Generate quizzes for today" (followed to its end: how many were made, or why none)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from san_desktop.app import Changed, Changes
from san_desktop.core.enums import JobStatus
from san_desktop.core.errors import SanError
from san_desktop.core.redact import first_cause
from san_desktop.queue.records import JobRecord
from san_desktop.services.quizzes import QuizDay
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import EmptyState
from san_desktop.ui.quizzes.card import text_label

GENERATE = "generate"  # the key of the Generate button
NONE_DUE = "No quizzes due"
NONE_DUE_TEXT = "Generate quizzes from today's cards, or wait until the ones you answered come back."
NONE_YET = "No quizzes yet"
NONE_YET_TEXT = (
    "Quizzes are made from a day's cards — a true-or-false and a short answer each — and come back just "
    "before you would forget them. Make them from today's cards, or let them be made when a day's TIL is "
    "finished (Settings&nbsp;›&nbsp;Quizzes)."
)


class NothingDue(EmptyState):
    """The Quizzes page's empty state. No signals of its own (``EmptyState``'s): the page refreshes when
    the quizzes it asked for are made (their job)."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._generation: tuple[str, str] | None = None  # (job id, day) of the generation asked for here

        self.summary = text_label(scale=1.2)
        self.summary.setAlignment(self.title.alignment())
        self.empty = self.text
        self.next_due = text_label()
        self.next_due.setAlignment(self.title.alignment())
        self.generate_button = self.button(GENERATE)
        self.generate_button.setText("Generate quizzes for today")
        self.generate_button.setToolTip("Make quizzes from today's cards (those that have none yet)")
        self.generate_state = text_label()
        self.generate_state.setAlignment(self.title.alignment())
        self.column.insertWidget(0, self.summary)
        self.column.insertWidget(self.column.indexOf(self.steps), self.next_due)
        self.column.insertWidget(self.column.indexOf(self.note), self.generate_state)
        self.generate_button.clicked.connect(self.generate_today)
        context.hub.changed.connect(self._on_hub_changed)
        self.show_queue(None, "", "")

    def show_queue(self, loaded: bool | None, summary: str, next_due: str, *, any_quizzes: bool = True) -> None:
        """``loaded`` None: the queue is still being read. ``any_quizzes`` False: none is waiting at all
        (a fresh start): what quizzes are and how they are made."""
        self.summary.setText(summary)
        self.summary.setVisible(bool(summary))
        if loaded is None:
            self.show_state("", "Loading quizzes…")
        elif any_quizzes or summary:
            self.show_state(NONE_DUE, NONE_DUE_TEXT, [(GENERATE, self.generate_button.text())])
        else:
            self.show_state(NONE_YET, NONE_YET_TEXT, [(GENERATE, self.generate_button.text())])
        self.next_due.setText(next_due)
        self.next_due.setVisible(bool(next_due))

    def generate_today(self) -> None:
        """Ask for quizzes of today's cards (those that have none yet)."""
        self.generate_button.setEnabled(False)
        self.generate_state.setText("Asking for today's quizzes…")

        def generate() -> Changed[tuple[str, JobRecord]]:
            day = self._app.til.today()
            made = self._app.generate_quizzes(day)
            return Changed((day, made.value), made.changes)

        def asked(result: tuple[str, JobRecord]) -> None:
            day, job = result
            self._generation = (job.id, day)
            self.generate_state.setText(f"Making quizzes from the cards of {day}…")
            # it may have ended before this was told: read it once, then follow its announcements
            self._context.ops.run(lambda: self._app.queue.get(job.id), lambda now: self._follow((now,)))

        def refused(exc: SanError) -> None:
            self.generate_button.setEnabled(True)
            self.generate_state.setText(str(exc))

        self._context.ops.write(generate, asked, refused, initiator=self)

    def _follow(self, jobs: tuple[JobRecord, ...]) -> None:
        if self._generation is None:
            return
        job_id, day = self._generation
        job = next((job for job in jobs if job.id == job_id), None)
        if job is None or job.status in (JobStatus.PENDING, JobStatus.PROCESSING):
            return
        self._generation = None
        self.generate_button.setEnabled(True)
        if job.status is JobStatus.COMPLETED:
            self._context.ops.run(lambda: self._app.quizzes.day(day), lambda made: self._made(day, made))
        elif job.status is JobStatus.FAILED:
            self.generate_state.setText(f"Making quizzes failed: {first_cause(job.error_message) or 'see Jobs'}")
        else:
            self.generate_state.setText("Making quizzes was cancelled.")

    def _made(self, day: str, made: QuizDay | None) -> None:
        count, dropped = (made.made, made.dropped) if made is not None else (0, 0)
        if count:
            text = f"Made {count} quiz{'zes' if count != 1 else ''} from the cards of {day}."
        elif dropped:
            text = f"No new quizzes: {dropped} could not be checked against their cards, so they were left out."
        else:
            text = f"No new quizzes: the cards of {day} have theirs already."
        self.generate_state.setText(text)

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        self._follow(changes.jobs)
