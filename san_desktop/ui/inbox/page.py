from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.errors import SanError
from san_desktop.core.redact import first_cause
from san_desktop.core.text import preview
from san_desktop.services.scrap_info import ScrapInfo
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import PageState, StateStack
from san_desktop.ui.common.lazy_model import select_key, selected_row
from san_desktop.ui.common.table_fit import Column, ColumnFitter, WordElideDelegate
from san_desktop.ui.inbox.scrap_states import fetch_failed, retryable, scrap_label
from san_desktop.ui.inbox.scrap_table import CAPTURED, CARD, REFINED, SCRAP, SOURCE, ScrapTableModel
from san_desktop.ui.inbox.welcome import AI, GITHUB, SCRAP_NOW, SetUp, read_set_up, show_welcome
from san_desktop.ui.window.capture import CaptureOutcome

MESSAGE_MS = 8000  # a passing message (scrapped, deleted, restored) clears itself after this
# the window's "Scrap clipboard" shortcut until the page, shown in the window, reads the action's own
FALLBACK_SCRAP_SHORTCUT = "Ctrl+Shift+V"
# more new scraps than this at once (an import, a burst from another process): the Inbox reads its first page
# again, one read and one repaint, rather than adding each row (a read, an insertion and a repaint a tick)
NEW_ROWS_ONE_BY_ONE = 20


class InboxPage(QWidget):
    """Scraps newest first with what their analysis and refinement are really doing, live by the change
    hub; scrap the clipboard, delete (with undo), retry a failed analysis or refinement, open a card. A link
    whose page could not be fetched says why, and is fetched again or carded from its address and title.

    With nothing scrapped yet, the list gives way to the three ways to capture, and offers (never asks
    for) an AI server and GitHub.

    Signals:
        open_card(str): the user asked to see this card.
        scrap_clipboard_requested(): the "Scrap clipboard" button was pressed.
        open_settings(str): the user asked to set something up: the Settings section ("ai", "github").
    """

    open_card = Signal(str)
    scrap_clipboard_requested = Signal()
    open_settings = Signal(str)

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._last_deleted: str | None = None
        self._scrap_shortcut = QKeySequence(FALLBACK_SCRAP_SHORTCUT)
        self._set_up: SetUp | None = None  # what the welcome need not offer; None until read
        self.model = ScrapTableModel(context.app.scraps)

        self.scrap_button = QPushButton("Scrap clipboard")
        self.retry_button = QPushButton("Retry analysis")
        self.retry_button.setToolTip("Analyse the selected scrap again (its last analysis failed)")
        self.retry_refine_button = QPushButton("Retry refinement")
        self.retry_refine_button.setToolTip("Clean up the selected scrap's text again (its last try failed)")
        self.retry_fetch_button = QPushButton("Retry fetch")
        self.retry_fetch_button.setToolTip("Download the selected link's page again (its last try failed)")
        self.link_card_button = QPushButton("Make card from link")
        self.link_card_button.setToolTip("Make the selected link's card from its address and title alone")
        self.delete_button = QPushButton("Delete")
        self.undo_button = QPushButton("Undo delete")
        self.undo_button.setVisible(False)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._on_message_timer_timeout)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.elide = WordElideDelegate(self.table)
        for column in (SCRAP, CARD):  # a source is an address: cut where it must be, as Qt does
            self.table.setItemDelegateForColumn(column, self.elide)
        self.columns = ColumnFitter(
            self.table,
            {
                CAPTURED: Column(sample="2000-12-31 23:59:59"),
                SCRAP: Column(0.45, 140),
                SOURCE: Column(0.15, 70),
                CARD: Column(0.28, 120),
                REFINED: Column(sample="Cleaning up…"),  # at least its header: "Cleaned-up text"
            },
        )
        self.states = StateStack(self.table)

        toolbar = QHBoxLayout()
        toolbar.addWidget(QLabel("<h2>Inbox</h2>"))
        toolbar.addStretch(1)
        toolbar.addWidget(self.retry_fetch_button)
        toolbar.addWidget(self.link_card_button)
        toolbar.addWidget(self.retry_button)
        toolbar.addWidget(self.retry_refine_button)
        toolbar.addWidget(self.undo_button)
        toolbar.addWidget(self.delete_button)
        toolbar.addWidget(self.scrap_button)
        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.message)
        layout.addWidget(self.states, 1)

        self.scrap_button.clicked.connect(self.scrap_clipboard_requested)
        self.delete_button.clicked.connect(self._on_delete_button_clicked)
        self.retry_button.clicked.connect(self._on_retry_button_clicked)
        self.retry_refine_button.clicked.connect(self._on_retry_refine_button_clicked)
        self.retry_fetch_button.clicked.connect(self._on_retry_fetch_button_clicked)
        self.link_card_button.clicked.connect(self._on_link_card_button_clicked)
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        self.states.message.action_triggered.connect(self._on_states_action_triggered)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved, self.model.loaded):
            signal.connect(self._update_state)
        self._page_reading = self._page_again = False  # (``_refresh_page``)
        self.model.loaded.connect(self._on_model_loaded)
        context.hub.changed.connect(self._on_hub_changed)
        context.runner.breaker_changed.connect(self._on_runner_breaker_changed)
        self.set_scrap_shortcut(self._scrap_shortcut)
        self.model.reload()
        self._update_actions()
        self._read_set_up()

    # --- what the window calls ----------------------------------------------------------------

    @property
    def hint(self) -> str:
        """The message line when nothing passing is said."""
        keys = self._scrap_shortcut.toString(QKeySequence.SequenceFormat.NativeText)
        return f"Copy something and press {keys}, or drop text, links or files here."

    def set_scrap_shortcut(self, shortcut: QKeySequence) -> None:
        """Name ``shortcut`` (the window's "Scrap clipboard" action's) wherever the page mentions it."""
        showing_hint = self.message.text() in ("", self.hint)
        self._scrap_shortcut = QKeySequence(shortcut)
        keys = shortcut.toString(QKeySequence.SequenceFormat.NativeText)
        self.scrap_button.setToolTip(f"Save what is on the clipboard as a scrap ({keys}, anywhere in the app)")
        if showing_hint:
            self._set_message(self.hint)
        self._update_state()

    def focus_search(self) -> bool:
        return False  # the Inbox has no search: Cards searches what the scraps became

    def refresh_page(self) -> None:
        """Read the newest scraps again, off the GUI thread (the rows stay until the new ones arrive)."""
        self.model.refresh(self._context.ops.run)
        self._read_set_up()

    def delete_selected(self) -> None:
        """Delete the selected scrap; Undo brings it back."""
        self._on_delete_button_clicked()

    # --- the list or the welcome --------------------------------------------------------------

    def _update_state(self) -> None:
        if self.model.loading:
            return  # the rows shown stay until the new ones arrive
        if self.model.rowCount():
            self.states.show_content()
        else:
            show_welcome(self.states, self._scrap_shortcut, self._set_up)
        self._set_message(self.message.text())

    def _set_message(self, text: str) -> None:
        """The message line; the usual hint is left out while the welcome says it at length."""
        self.message.setText(text)
        self.message.setVisible(not (text == self.hint and self.states.kind is PageState.EMPTY))

    def _read_set_up(self) -> None:
        self._context.ops.run(lambda: read_set_up(self._app), self._on_set_up_read)

    def _on_set_up_read(self, set_up: SetUp) -> None:
        self._set_up = set_up
        self._update_state()

    def selected_scrap(self) -> ScrapInfo | None:
        return selected_row(self.table, self.model)

    def select_scrap(self, scrap_id: str) -> bool:
        return select_key(self.table, self.model, scrap_id)

    def say(self, text: str, ms: int = MESSAGE_MS) -> None:
        """A passing message: it gives way to the usual hint after ``ms``. The offer to undo a delete
        lasts as long as its "Deleted: …" message: any newer news (a scrap, a retry, a refusal) ends it."""
        self._offer_undo(None)
        self._set_message(text)
        self._message_timer.start(ms)

    def _offer_undo(self, scrap_id: str | None) -> None:
        self._last_deleted = scrap_id
        self.undo_button.setVisible(scrap_id is not None)

    def show_capture(self, outcome: CaptureOutcome) -> None:
        scrap_id = outcome.result.scrap_id
        self._refresh([scrap_id], then=lambda: self.select_scrap(scrap_id))
        if outcome.result.created:
            self.say(f"Scrapped: {outcome.label}")
        else:
            self.say(f"Already scrapped: {outcome.label} (the existing scrap is selected)")

    def show_rejection(self, reason: str) -> None:
        self.say(reason, 15_000)

    def _refresh(self, scrap_ids: list[str], then: Any = None) -> None:
        """Look at these scraps again (off the GUI thread) and update, add or drop their rows."""

        ticket = self.model.ask(scrap_ids)  # reads run on two threads: a late answer of an older one is dropped

        def apply(infos: list[ScrapInfo]) -> None:
            found = {info.id: info for info in infos if not info.deleted}
            for scrap_id in sorted(scrap_ids):
                self.model.answer(ticket, scrap_id, found.get(scrap_id))
            self._update_actions()
            if then is not None:
                then()

        self._context.ops.run(lambda: self._app.scraps.get_many(scrap_ids), apply)

    def _refresh_page(self) -> None:
        """Read the first page again, one read at a time: asked for while one is on its way, once more after
        it (thousands of new scraps, a tick's worth at a time, make one read, not one a tick)."""
        if self._page_reading:
            self._page_again = True
            return
        self._page_reading, self._page_again = True, False

        def read(call: Callable[[], list[Any]], arrived: Callable[[list[Any]], None], failed: Any) -> None:
            def refused(exc: Exception) -> None:
                self._page_reading = False  # (the rows stay; the next change asks again)
                failed(exc)

            self._context.ops.run(call, arrived, refused)

        self.model.refresh(read)

    def _on_model_loaded(self) -> None:
        if self._page_reading:
            self._page_reading = False
            if self._page_again:
                self._refresh_page()

    def _concerns_loaded_rows(self, scrap_id: str) -> bool:
        """A scrap shown now, or newer than all shown (a new capture); others load when scrolled to."""
        if self.model.position_of(scrap_id) is not None:
            return True
        newest = self.model.row_at(0)
        return newest is None or scrap_id > newest.id

    def _update_actions(self) -> None:
        info = self.selected_scrap()
        self.delete_button.setEnabled(info is not None)
        self.retry_button.setVisible(info is not None and retryable(info.analysis_status))
        self.retry_refine_button.setVisible(info is not None and retryable(info.refine_status))
        self.retry_fetch_button.setVisible(info is not None and fetch_failed(info))
        # once its analysis was asked for, Retry analysis (or the card itself) takes over
        self.link_card_button.setVisible(
            info is not None and fetch_failed(info) and info.analysis_status is None and info.card_id is None
        )
        if info is not None and fetch_failed(info) and info.fetch_error and not self._message_timer.isActive():
            # the Card column is narrow: the whole reason where there is room for it
            self._set_message(f"{scrap_label(info)}: {first_cause(info.fetch_error)}")
        elif not self._message_timer.isActive():
            self._set_message(self.hint)

    def _retry(self, job_id: str | None, doing: str) -> None:
        if job_id is None:
            return
        self._context.ops.write(
            lambda: self._app.retry_job(job_id), lambda _job: self.say(doing), lambda exc: self.say(str(exc))
        )

    # --- slots --------------------------------------------------------------------------------

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        # an import's thousands of new jobs: their scraps come with the import's end, not a read a tick each
        unshown_new = {scrap_id for scrap_id in changes.new_scrap_jobs if self.model.position_of(scrap_id) is None}
        told = changes.scraps if changes.external else changes.scraps - unshown_new
        wanted = sorted(scrap_id for scrap_id in told if self._concerns_loaded_rows(scrap_id))
        new = sum(1 for scrap_id in wanted if self.model.position_of(scrap_id) is None)
        if changes.library or new > NEW_ROWS_ONE_BY_ONE:
            self._refresh_page()
        elif wanted:
            self._refresh(wanted)
        if changes.settings:
            self._read_set_up()  # an AI server or a GitHub token set up: no longer offered

    def _on_states_action_triggered(self, key: str) -> None:
        if key == SCRAP_NOW:
            self.scrap_clipboard_requested.emit()
        elif key in (AI, GITHUB):
            self.open_settings.emit(key)

    def showEvent(self, event: QShowEvent) -> None:
        """In the window: name the shortcut its "Scrap clipboard" action really has."""
        super().showEvent(event)
        action = getattr(self.window(), "scrap_action", None)
        shortcut = action.shortcut() if isinstance(action, QAction) else QKeySequence()
        if not shortcut.isEmpty() and shortcut != self._scrap_shortcut:
            self.set_scrap_shortcut(shortcut)

    def _on_runner_breaker_changed(self, _change: object) -> None:
        status = self._context.runner.breaker_status()
        self.model.paused = status is not None and status.state.value == "OPEN"
        self.model.repaint_states()

    def _on_message_timer_timeout(self) -> None:
        self._offer_undo(None)
        self._set_message(self.hint)

    def _on_retry_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.analysis_job_id, "Analysing again…")

    def _on_retry_refine_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.refine_job_id, "Refining again…")

    def _on_retry_fetch_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is not None:
            self._retry(info.fetch_job_id, "Fetching the page again…")

    def _on_link_card_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None:
            return
        self._context.ops.write(
            lambda: self._app.analyse_link_now(info.id),
            lambda _changes: self.say("Making the card from the link's address and title…"),
            lambda exc: self.say(str(exc)),
        )

    def _on_delete_button_clicked(self) -> None:
        info = self.selected_scrap()
        if info is None:
            return

        def deleted(_changes: Changes) -> None:
            self.say(f"Deleted: {preview(scrap_label(info), 60)}", 30_000)
            self._offer_undo(info.id)

        def failed(exc: SanError) -> None:
            self.say(str(exc))
            self._refresh([info.id])  # deleted elsewhere meanwhile: the row goes

        self._context.ops.write(lambda: self._app.delete_scrap(info.id), deleted, failed, initiator=self)

    def _on_undo_button_clicked(self) -> None:
        scrap_id = self._last_deleted
        self._offer_undo(None)
        if scrap_id is None:
            return

        def restored(_changes: Changes) -> None:
            self.model.reload()  # it goes back to its place by capture time
            self.select_scrap(scrap_id)
            self.say("Restored.")

        self._context.ops.write(lambda: self._app.restore_scrap(scrap_id), restored, lambda exc: self.say(str(exc)))

    def _on_table_double_clicked(self, index: QModelIndex) -> None:
        info = self.model.row_at(index.row())
        if info is not None and info.card_id:
            self.open_card.emit(info.card_id)
