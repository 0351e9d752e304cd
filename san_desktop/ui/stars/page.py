"""The Stars page: the learner's starred GitHub repositories ranked against what they are learning (the
latest ranking run), filtered by language. Refresh syncs the stars and ranks them again (two jobs) and says
what runs ("Fetching starred repositories… page 2", "Ranking against your cards…") or how it failed; a row
opens on GitHub (https only) or is hidden for good ("Not interested", with Undo). Without a GitHub token the
page points to Settings. Everything is read and written off the GUI thread."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from san_desktop.app import Changes
from san_desktop.core.enums import ACTIVE_JOB_STATUSES
from san_desktop.core.errors import SanError
from san_desktop.queue.records import JobRecord
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import StateStack
from san_desktop.ui.quizzes.card import text_label
from san_desktop.ui.stars.activity import StarsActivity
from san_desktop.ui.stars.state import NEVER_SYNCED, STAR_JOB_TYPES, StarsSnapshot, empty_text, load_stars
from san_desktop.ui.stars.table import StarsTable, StarsTableModel

if TYPE_CHECKING:  # numpy comes with the star service: it loads with the page's first read, after the first frame
    from san_desktop.services.stars import Recommendation

ALL_LANGUAGES = "All languages"
SHOW_ALL = "all_languages"  # the no-results state's button
MESSAGE_MS = 10_000  # a passing message (hidden, refused) clears itself after this

UrlOpener = Callable[[QUrl], bool]


class StarsPage(QWidget):
    """Signals:
    settings_requested(): the user asked for Settings (to connect GitHub, or fix what failed).
    loaded(): what was just read is shown (the list, the status, the filter's languages).
    """

    settings_requested = Signal()
    loaded = Signal()

    def __init__(
        self, context: AppContext, parent: QWidget | None = None, *, open_url: UrlOpener | None = None
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._open_url: UrlOpener = open_url or QDesktopServices.openUrl
        self.snapshot: StarsSnapshot | None = None  # the last one shown
        self._token = 0  # the newest load; older ones that come back late are dropped
        self._hidden: dict[str, str] = {}  # repository id -> full name, of those hidden from this page

        self.activity = StarsActivity(context.runner, context.hub)
        self.language = QComboBox()
        self.language.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.language.addItem(ALL_LANGUAGES, None)
        self.language.setToolTip("Show the recommendations in one language only")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Fetch your starred repositories from GitHub and rank them again")
        self.message = text_label(rich=True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)

        self.model = StarsTableModel()
        self.table = StarsTable(self.model)
        self.open_button = QPushButton("Open on GitHub")
        self.open_button.setToolTip("Open the chosen repository in your browser (Enter, or double-click)")
        self.hide_button = QPushButton("Not interested")
        self.hide_button.setToolTip("Hide the chosen repository from this and future recommendations (Delete)")

        header = QHBoxLayout()
        header.addWidget(QLabel("<h2>Stars</h2>"))
        header.addStretch(1)
        header.addWidget(QLabel("Language:"))
        header.addWidget(self.language)
        header.addWidget(self.refresh_button)
        actions = QHBoxLayout()
        actions.addWidget(self.open_button)
        actions.addWidget(self.hide_button)
        actions.addStretch(1)
        list_view = QWidget()
        list_layout = QVBoxLayout(list_view)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(self.table, 1)
        list_layout.addLayout(actions)
        self.stack = StateStack(list_view)
        self.list_view, self.empty_view = list_view, self.stack.message
        self.empty = self.stack.message.text
        self.empty_button = self.stack.message.button("empty")  # Open Settings…, or Refresh
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(self.activity)
        layout.addWidget(self.message)
        layout.addWidget(self.stack, 1)

        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self.message.clear)
        self.refresh_button.clicked.connect(self.refresh)
        self.language.activated.connect(self._on_language_activated)
        self.open_button.clicked.connect(self.open_current)
        self.hide_button.clicked.connect(self.hide_current)
        self.empty_button.clicked.connect(self._on_empty_button_clicked)
        self.stack.message.action_triggered.connect(self._on_stack_action_triggered)
        self.table.activated.connect(self._on_table_activated)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        self.activity.busy_changed.connect(self._on_activity_busy_changed)
        self.activity.settings_requested.connect(self.settings_requested)
        self.message.linkActivated.connect(self._on_message_link_activated)
        # Delete only where the list is (not in the language filter)
        self._hide_shortcut = QShortcut(QKeySequence.StandardKey.Delete, self.table)
        self._hide_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._hide_shortcut.activated.connect(self.hide_current)
        self._hide_shortcut.setWhatsThis("Not interested in the selected repository")
        context.hub.changed.connect(self._on_hub_changed)
        self._update_refresh()
        self._update_buttons()

    # --- reading ------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the status, the jobs and the recommendations (in the chosen language) again."""
        self._token += 1
        token = self._token
        language = self.language.currentData()
        self._context.ops.run(lambda: load_stars(self._app, language), lambda snapshot: self._loaded(token, snapshot))

    def _loaded(self, token: int, snapshot: StarsSnapshot) -> None:
        if token != self._token:
            return  # a newer load was asked for (another language, a finished job)
        self.snapshot = snapshot
        self.activity.show_loaded(snapshot.status if snapshot.connected else None, snapshot.sync_job, snapshot.rank_job)
        self._fill_languages(snapshot)
        self.model.set_rows(list(snapshot.recommendations))
        self._show_list_or_empty()
        if self.model.rows:
            self.table.selectRow(0)
        self._update_buttons()
        self._update_refresh()
        self.loaded.emit()

    def _fill_languages(self, snapshot: StarsSnapshot) -> None:
        chosen = snapshot.language
        languages = sorted({*snapshot.status.languages, *([chosen] if chosen else [])}, key=str.casefold)
        self.language.blockSignals(True)
        self.language.clear()
        self.language.addItem(ALL_LANGUAGES, None)
        for language in languages:
            self.language.addItem(language, language)
        self.language.setCurrentIndex(max(0, self.language.findData(chosen)) if chosen else 0)
        self.language.setEnabled(self.language.count() > 1)
        self.language.blockSignals(False)

    def _show_list_or_empty(self) -> None:
        snapshot = self.snapshot
        if self.model.rows or snapshot is None:
            self.stack.show_content()
            return
        if snapshot.language is not None and snapshot.connected and not snapshot.recommendations:
            self.stack.show_no_results(
                f"Nothing in {snapshot.language}", empty_text(snapshot), [(SHOW_ALL, "Show all languages")]
            )
            return
        hidden_all = bool(snapshot.recommendations)  # read with rows, and each was hidden since
        text = (
            "You hid every recommendation shown: Refresh once you have learned more."
            if hidden_all
            else empty_text(snapshot)
        )
        offer = not snapshot.connected or text == NEVER_SYNCED
        action = [("empty", "Open Settings…" if not snapshot.connected else "Refresh")] if offer else []
        title = "GitHub is not connected" if not snapshot.connected else "No recommendations yet"
        self.stack.show_empty(title, text, action)

    # --- refreshing ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Sync the stars, then rank them (jobs); their progress shows here as it comes."""
        if self.activity.busy:
            return
        self.activity.set_asking(True)

        def asked(job: JobRecord) -> None:
            self.activity.set_asking(False)
            self.activity.track(job)

        def refused(exc: SanError) -> None:
            self.activity.set_asking(False)
            self.say(exc)
            self.reload()  # no token (any more): the page says where to set one

        self._context.ops.write(self._app.refresh_stars, asked, refused, initiator=self)

    def _update_refresh(self) -> None:
        connected = self.snapshot is not None and self.snapshot.connected
        busy = self.activity.busy
        self.refresh_button.setEnabled(connected and not busy)
        self.refresh_button.setToolTip(
            "Fetch your starred repositories from GitHub and rank them again"
            if connected
            else "No GitHub token yet: the page says how to give one"
        )
        self.empty_button.setEnabled(not connected or not busy)  # without a token it opens Settings

    # --- one repository -----------------------------------------------------------------------

    def current(self) -> Recommendation | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        from san_desktop.services.stars import Recommendation  # a valid index: rows were read, it is loaded

        found = self.model.data(index, Qt.ItemDataRole.UserRole)
        return found if isinstance(found, Recommendation) else None

    def open_current(self) -> None:
        """The chosen repository in the browser: https addresses only, anything else is refused."""
        item = self.current()
        if item is None:
            return
        url = QUrl(item.html_url, QUrl.ParsingMode.StrictMode)
        if not url.isValid() or url.scheme() != "https" or not url.host():
            self.say(f"Not opened: {html.escape(item.html_url)} is not an https address.")
            return
        if not self._open_url(url):
            self.say(f"No browser could open {html.escape(url.toString())}.")

    def hide_current(self) -> None:
        """Hide the chosen repository ("Not interested"): its row goes at once, and it stays out of later
        runs; the message line offers Undo."""
        item = self.current()
        if item is None:
            return
        row = self.model.remove(item.repository_id)
        if self.model.rows and row is not None:
            self.table.selectRow(min(row, len(self.model.rows) - 1))
        self._show_list_or_empty()
        self._update_buttons()
        name = html.escape(item.full_name)
        self._hidden[item.repository_id] = item.full_name

        def hidden(_changes: Changes) -> None:
            self.say(f"{name} is hidden from your recommendations. <a href='undo:{item.repository_id}'>Undo</a>")

        def refused(exc: SanError) -> None:
            self.say(exc)
            self.reload()  # show what is true

        self._context.ops.write(
            lambda: self._app.set_not_interested(item.repository_id), hidden, refused, initiator=self
        )

    def say(self, text: str | SanError, ms: int = MESSAGE_MS) -> None:
        """A passing message: rich text written here, or an error (escaped)."""
        self.message.setText(html.escape(str(text)) if isinstance(text, SanError) else text)
        self._message_timer.start(ms)

    def _update_buttons(self) -> None:
        chosen = self.current() is not None
        self.open_button.setEnabled(chosen)
        self.hide_button.setEnabled(chosen)

    # --- what the window's shortcuts call -----------------------------------------------------

    def focus_search(self) -> bool:
        return False  # the language filter is a list to choose from, not a text to search

    def refresh_page(self) -> None:
        """Read what is stored again (off the GUI thread); the Refresh button asks GitHub."""
        self.reload()

    def delete_selected(self) -> None:
        """Nothing here: Delete in the list is "Not interested" (the list's own key, with Undo)."""

    # --- slots --------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.reload()  # a token set on the command line, or news while hidden

    def _on_hub_changed(self, changes: Changes, initiator: object) -> None:
        finished = any(job.job_type in STAR_JOB_TYPES and job.status not in ACTIVE_JOB_STATUSES for job in changes.jobs)
        if not (finished or changes.settings or (changes.stars and initiator is not self)):
            return  # a sync or a ranking that ended changes the list, the status or the error shown
        if self.isVisible():
            self.reload()

    def _on_activity_busy_changed(self, _busy: bool) -> None:
        self._update_refresh()

    def _on_language_activated(self, _index: int) -> None:
        self.reload()

    def _on_stack_action_triggered(self, key: str) -> None:
        if key == SHOW_ALL:
            self.language.setCurrentIndex(0)
            self.reload()

    def _on_empty_button_clicked(self) -> None:
        if self.snapshot is not None and not self.snapshot.connected:
            self.settings_requested.emit()
        else:
            self.refresh()

    def _on_table_activated(self, _index: QModelIndex) -> None:
        self.open_current()

    def _on_table_current_row_changed(self, _current: QModelIndex, _previous: QModelIndex) -> None:
        self._update_buttons()

    def _on_message_link_activated(self, link: str) -> None:
        kind, _sep, repository_id = link.partition(":")
        if kind != "undo" or not repository_id:
            return
        self.message.clear()
        name = html.escape(self._hidden.pop(repository_id, "The repository"))

        def shown(_changes: Changes) -> None:
            self.say(f"{name} is back among your recommendations.")
            self.reload()

        self._context.ops.write(
            lambda: self._app.set_not_interested(repository_id, False), shown, self.say, initiator=self
        )
