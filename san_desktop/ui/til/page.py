"""The TIL page: days with cards (newest first), and for the chosen day its generation (progress by step,
the failed step with Retry), the rendered note, its versions and its recall cards."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.enums import JobType
from san_desktop.core.errors import SanError
from san_desktop.core.markdown_html import to_safe_html
from san_desktop.core.workflow import TIL_STEPS, TilStatus
from san_desktop.jobs.registry import JobProgress
from san_desktop.services.til import DayInfo, TilView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import StateStack
from san_desktop.ui.common.look import tone_style
from san_desktop.ui.common.ops import LatestOnly
from san_desktop.ui.til.review import TilReviewWindow

_STATUS_MARK = {TilStatus.COMPLETED: "✓", TilStatus.FAILED: "!"}
NO_DAYS = "No days with cards yet"
NO_DAYS_TEXT = (
    "A “Today I Learned” note is written from a day's cards. Scrap what you learn; once its cards are made, "
    "the day appears here — choose it and press Generate, then review the note and commit it to GitHub or "
    "a local git repository."
)


class TilPage(QWidget):
    """Signals:
    open_card(str): the user asked to see this (recall) card.
    """

    open_card = Signal(str)

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._view: TilView | None = None
        self._day: str | None = None
        self._stale = False  # days changed while the page was hidden
        self._reviews: dict[str, TilReviewWindow] = {}
        # reads run two at a time: only the newest one's answer is shown (an older state never comes back)
        self._day_reads = LatestOnly(context.ops)
        self._days_reads = LatestOnly(context.ops)
        self._version_reads = LatestOnly(context.ops)  # an older version's text, chosen in Version

        self.days = QListWidget()
        self.days.setMinimumWidth(200)
        self.heading = QLabel("<h2>Today I Learned</h2>")
        self.generate_button = QPushButton("Generate")
        self.generate_button.setToolTip("Write this day's TIL from its cards (again, if the cards changed)")
        self.review_button = QPushButton("Review and commit…")
        self.review_button.setToolTip("Edit the note, see its versions, and commit it to your TIL repository")
        self.retry_button = QPushButton("Retry")
        self.retry_button.setToolTip("Resume at the step that failed; finished steps are not done again")
        self.progress = QProgressBar()
        self.progress.setRange(0, len(TIL_STEPS))
        self.progress.setFormat("%v of %m steps")
        self.progress.setFixedWidth(260)
        self.state = QLabel()
        self.state.setWordWrap(True)
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet(tone_style("warning"))
        self.versions = QComboBox()
        self.versions.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "v2 edited …" whole
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)  # links open in the browser (http/https only), never in the app
        self.text.setPlaceholderText("Choose a day with cards, then Generate.")
        self.recall = QListWidget()
        self.recall_label = QLabel("Recall cards")

        actions = QHBoxLayout()
        actions.addWidget(self.generate_button)
        actions.addWidget(self.retry_button)
        actions.addWidget(self.review_button)
        actions.addWidget(self.progress)
        actions.addStretch(1)
        actions.addWidget(QLabel("Version:"))
        actions.addWidget(self.versions)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(actions)
        right_layout.addWidget(self.state)
        right_layout.addWidget(self.notice)
        right_layout.addWidget(self.text, 4)
        right_layout.addWidget(self.recall_label)
        right_layout.addWidget(self.recall, 1)
        splitter = QSplitter()
        splitter.setObjectName("days_text")  # its sizes are remembered under this name
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.days)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 4)
        self.states = StateStack(splitter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.states, 1)

        self.days.currentItemChanged.connect(self._on_days_current_item_changed)
        self.generate_button.clicked.connect(self._on_generate_button_clicked)
        self.retry_button.clicked.connect(self._on_generate_button_clicked)
        self.review_button.clicked.connect(self.open_review)
        self.versions.activated.connect(self._on_versions_activated)
        self.text.anchorClicked.connect(self._on_text_anchor_clicked)
        self.recall.itemActivated.connect(self._on_recall_item_activated)
        self.recall.itemClicked.connect(self._on_recall_item_activated)
        # (a described shortcut is listed in Help › Keyboard shortcuts)
        QShortcut(QKeySequence("Alt+Up"), self, self.newer_day).setWhatsThis("Newer day")
        QShortcut(QKeySequence("Alt+Down"), self, self.older_day).setWhatsThis("Older day")
        context.hub.changed.connect(self._on_hub_changed)
        context.runner.job_progress.connect(self._on_runner_job_progress)
        self._show(None)
        self.reload_days()

    # --- days ---------------------------------------------------------------------------------

    def reload_days(self) -> None:
        self._days_reads.run(self._app.til.days, self._fill_days)

    def _fill_days(self, days: list[DayInfo]) -> None:
        keep = self._day
        self.days.blockSignals(True)
        self.days.clear()
        for day in days:
            mark = "" if day.status is None else _STATUS_MARK.get(day.status, "…")
            item = QListWidgetItem(f"{day.local_date}   {day.cards} card{'s' if day.cards != 1 else ''}  {mark}")
            item.setData(Qt.ItemDataRole.UserRole, day.local_date)
            item.setToolTip(day.title or "No TIL yet")
            self.days.addItem(item)
        self.days.blockSignals(False)
        rows = [self.days.item(row).data(Qt.ItemDataRole.UserRole) for row in range(self.days.count())]
        if keep in rows:
            self.days.setCurrentRow(rows.index(keep))
        elif rows:
            self.days.setCurrentRow(0)
        if rows:
            self.states.show_content()
        else:
            self.states.show_empty(NO_DAYS, NO_DAYS_TEXT)

    # --- what the window's shortcuts call -----------------------------------------------------

    def focus_search(self) -> bool:
        return False  # the days are few and listed newest first: nothing to search

    def refresh_page(self) -> None:
        """Read the days, and the day shown, again (off the GUI thread)."""
        self.reload_days()
        if self._day is not None:
            self._load(self._day)

    def delete_selected(self) -> None:
        """Nothing: a day's TIL is not deleted, only written again (Generate) or replaced by a version."""

    def open_day(self, local_date: str) -> None:
        """Show ``local_date`` (a search result asks): at once when it is listed, else once the days are
        read again (a TIL made since they were read)."""
        if not self.select_day(local_date):
            self._day = local_date  # kept selected by the next fill
            self.reload_days()

    def select_day(self, local_date: str) -> bool:
        for row in range(self.days.count()):
            if self.days.item(row).data(Qt.ItemDataRole.UserRole) == local_date:
                self.days.setCurrentRow(row)
                return True
        return False

    def newer_day(self) -> None:
        self.days.setCurrentRow(max(0, self.days.currentRow() - 1))

    def older_day(self) -> None:
        self.days.setCurrentRow(min(self.days.count() - 1, self.days.currentRow() + 1))

    # --- one day ------------------------------------------------------------------------------

    def _load(self, local_date: str) -> None:
        self._day = local_date
        self._version_reads.drop()  # the day's own text comes with it

        def load() -> tuple[TilView, str]:
            view = self._app.til.get(local_date)
            return view, to_safe_html(view.markdown) if view.markdown else ""  # rendered off the GUI thread

        def loaded(result: tuple[TilView, str]) -> None:
            self._show(*result)

        def missing(_exc: SanError) -> None:
            self._show(None)

        self._day_reads.run(load, loaded, missing)

    def _show(self, view: TilView | None, rendered: str = "") -> None:
        self._view = view
        day = self._day
        self.heading.setText(f"<h2>Today I Learned — {html.escape(day)}</h2>" if day else "<h2>Today I Learned</h2>")
        running = view is not None and view.active_job_id is not None
        failed = view is not None and view.status is TilStatus.FAILED and not running
        self.generate_button.setEnabled(day is not None and not running)
        self.retry_button.setVisible(failed)
        self.review_button.setVisible(view is not None and view.markdown is not None and not running)
        self.progress.setVisible(running)
        if view is None:
            self.state.setText("No TIL for this day yet." if day else "")
            self.notice.clear()
            self.versions.clear()
            self.text.clear()
            self.recall.clear()
            return
        if failed:
            self.state.setText(f"Failed at the {view.last_failed_step} step: {view.last_error_message}")
            self.state.setStyleSheet(tone_style("error"))
        else:
            self.state.setStyleSheet("")
            self.state.setText("Generating…" if running else f"Version {view.current_version or '-'}")
        self.notice.setText(
            "Inputs changed — the day's cards changed since this version was made: Generate again."
            if view.inputs_changed
            else ""
        )
        self.versions.clear()
        for version in reversed(view.versions):
            self.versions.addItem(f"v{version.version} {version.kind.value.lower()}", version.version)
        self.text.setHtml(rendered)
        self.recall.clear()
        for item in view.recall:
            label = item.title if item.within_threshold else f"{item.title}   (nearest; nothing is close)"
            widget_item = QListWidgetItem(label)
            widget_item.setData(Qt.ItemDataRole.UserRole, item.card_id)
            self.recall.addItem(widget_item)
        self.recall_label.setText("Recall cards" if view.recall else "Recall cards: none yet")

    def open_review(self) -> TilReviewWindow | None:
        """The review-and-commit window of the shown day (one per day, raised if open). A window of its own,
        on this page's screen; the main window closes it when the app quits."""
        day = self._day
        if day is None:
            return None
        window = self._reviews.get(day)
        if window is None:
            window = TilReviewWindow(self._context, day, screen=self.screen())
            window.saved.connect(lambda _version: self._load(day))
            window.closed.connect(lambda: self._reviews.pop(day, None))
            self._reviews[day] = window
        window.show()
        window.raise_()
        window.activateWindow()
        return window

    # --- slots --------------------------------------------------------------------------------

    def _on_days_current_item_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self._load(str(current.data(Qt.ItemDataRole.UserRole)))

    def _on_generate_button_clicked(self) -> None:
        day = self._day
        if day is None:
            return
        self.generate_button.setEnabled(False)
        self.retry_button.setVisible(False)
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.state.setStyleSheet("")
        self.state.setText("Waiting for a worker…")

        def refused(exc: SanError) -> None:
            self.progress.setVisible(False)
            self.state.setText(str(exc))
            self.generate_button.setEnabled(True)

        self._context.ops.write(lambda: self._app.generate_til(day), lambda _job: self._load(day), refused)

    def _on_runner_job_progress(self, progress: JobProgress) -> None:
        view = self._view
        if progress.job_type is JobType.TIL_GENERATION and view is not None and progress.target_id == view.summary_id:
            self.progress.setVisible(True)
            self.progress.setValue(progress.index - 1)
            self.state.setText(f"Step {progress.index} of {progress.total}: {progress.step}…")

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.reload_days()

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        til_jobs = [job for job in changes.jobs if job.job_type is JobType.TIL_GENERATION]
        if not self.isVisible() and not til_jobs:
            self._stale = self._stale or bool(changes.cards_of_scraps or changes.scraps or changes.library)
            return  # cards being made while another page shows: look again when this one is shown
        if self._day is not None and (
            any(self._view is None or job.target_id == self._view.summary_id for job in til_jobs)
            or changes.cards_of_scraps
            or changes.library
        ):
            self._load(self._day)  # a TIL finished or failed, or a card of some day changed
        if til_jobs or changes.cards_of_scraps or changes.scraps or changes.library:
            self.reload_days()

    def _on_versions_activated(self, index: int) -> None:
        day, version = self._day, self.versions.itemData(index)
        if day is None or version is None:
            return
        self._version_reads.run(lambda: to_safe_html(self._app.til.version_text(day, int(version))), self.text.setHtml)

    def _on_text_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)

    def _on_recall_item_activated(self, item: QListWidgetItem) -> None:
        self.open_card.emit(str(item.data(Qt.ItemDataRole.UserRole)))
