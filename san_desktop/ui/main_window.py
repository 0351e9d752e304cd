from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from san_desktop import APP_NAME
from san_desktop.app import Changes
from san_desktop.core.enums import JobPool, JobStatus
from san_desktop.core.settings import Settings
from san_desktop.queue.monitor import JobFilter
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.folder_dialog import FolderPathDialog, open_folder
from san_desktop.ui.common.resources import app_icon
from san_desktop.ui.common.secret_clipboard import forget_secret
from san_desktop.ui.common.unsaved import AskUnsaved, ask_unsaved
from san_desktop.ui.inbox.page import InboxPage
from san_desktop.ui.jobs.page import JobsPage
from san_desktop.ui.quizzes.page import QuizzesPage
from san_desktop.ui.quizzes.reminder import QuizReminder
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.stars.page import StarsPage
from san_desktop.ui.til.page import TilPage
from san_desktop.ui.transfer.actions import ImportActions
from san_desktop.ui.trash.page import TrashPage
from san_desktop.ui.window.about_dialog import AboutDialog
from san_desktop.ui.window.banner import Banner
from san_desktop.ui.window.browser_endpoint import BrowserEndpoint
from san_desktop.ui.window.capture import CaptureController, CaptureOutcome
from san_desktop.ui.window.crash_dialog import app_closing
from san_desktop.ui.window.navigation import NavigationList
from san_desktop.ui.window.notifier import Notice, Notifier
from san_desktop.ui.window.page_actions import PageActions, set_shortcuts
from san_desktop.ui.window.quitting import QuitGuard
from san_desktop.ui.window.runner_news import RunnerNews
from san_desktop.ui.window.shortcuts_dialog import ShortcutsDialog
from san_desktop.ui.window.tray import Tray
from san_desktop.ui.window.watch_indicator import WatchIndicator
from san_desktop.ui.window.window_state import WindowMemory, save_window_state

log = logging.getLogger(__name__)

# (key, navigation label, what the page will do); its icon is resources/icons/page-<key>.svg
PAGES: tuple[tuple[str, str, str], ...] = (
    ("inbox", "Inbox", "Everything you scrap, with the state of its analysis."),
    ("cards", "Cards", "Knowledge cards made from your scraps."),
    (
        "til",
        "TIL",
        'A "Today I Learned" note per day: generate it, review and edit it, commit it to GitHub or a local repository.',
    ),
    ("quizzes", "Quizzes", "Recall quizzes that bring back what you learned."),
    ("stars", "Stars", "Recommendations from your starred GitHub repositories."),
    ("jobs", "Jobs", "Background work with its state, errors and retries."),
    ("trash", "Trash", "What you deleted, kept for a while: restore it, or empty the Trash."),
)


class MainWindow(QMainWindow):
    """The SAN Desktop window: navigation, pages, capture (shortcut, drops, clipboard watcher), status.
    Closing it quits the app (``QuitGuard``): the other windows close with it, asked about once.

    Signals:
        first_frame(): emitted once, when the window's first frame has been painted (start-up's background
            work waits for it, so that it does not compete with that frame), or after
            ``FIRST_FRAME_LATEST_MS`` if no frame came by then (a window that is not shown).
        shut_down(): emitted once, after closing has stopped the job runner and released the database
            and the instance lock.
    """

    first_frame = Signal()
    shut_down = Signal()
    FIRST_FRAME_LATEST_MS = 2_000

    def __init__(self, context: AppContext, *, ask: AskUnsaved = ask_unsaved) -> None:
        super().__init__()
        self._context = context
        self.quit_guard = QuitGuard(self, ask)
        self._app = context.app
        self._runner = context.runner
        self._closed = False
        self._watch_wanted = context.settings.capture.watch_clipboard
        self._first_frame_announced = False
        self._first_frame_timer = QTimer(self)
        self._first_frame_timer.setSingleShot(True)
        self._first_frame_timer.setInterval(self.FIRST_FRAME_LATEST_MS)
        self._first_frame_timer.timeout.connect(self._on_first_frame_timer_timeout)
        self._first_frame_timer.start()
        self.installEventFilter(self)
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.resize(1100, 720)
        self.setMinimumSize(QSize(640, 420))
        self.setAcceptDrops(True)
        self.settings_dialog: SettingsDialog | None = None
        self.folder_dialog: FolderPathDialog | None = None

        self.capture = CaptureController(context.app, context.ops, self)
        self.inbox = InboxPage(context)
        self.cards = CardsPage(context)
        self.jobs = JobsPage(context)
        self.til = TilPage(context)
        self.quizzes = QuizzesPage(context)
        self.stars = StarsPage(context)
        self.trash = TrashPage(context)
        built: dict[str, QWidget] = {
            "inbox": self.inbox,
            "cards": self.cards,
            "til": self.til,
            "quizzes": self.quizzes,
            "stars": self.stars,
            "jobs": self.jobs,
            "trash": self.trash,
        }

        self.navigation = NavigationList()
        self.pages = QStackedWidget()
        self._page_index: dict[str, int] = {}
        self.memory = WindowMemory(self, context.settings.window)
        for key, label, description in PAGES:
            page = built[key]
            self._page_index[key] = self.pages.addWidget(page)
            self.navigation.add_page(key, label, f"page-{key}", description)
            self.memory.register_splitters_in(key, page)
        self.page_actions = PageActions(self.pages.currentWidget, self._say, self)
        self.navigation.currentRowChanged.connect(self._on_navigation_current_row_changed)
        self.navigation.setCurrentRow(0)

        self.banner = Banner()
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.banner)
        outer.addLayout(self.navigation.beside(self.pages), 1)
        self.setCentralWidget(central)

        self._build_menus()
        self._build_status_bar()
        self.browser_endpoint = BrowserEndpoint(context, self)
        self.browser_endpoint.start()
        self._build_notifications()
        self.capture.captured.connect(self._on_capture_captured)
        self.capture.rejected.connect(self._on_capture_rejected)
        self.inbox.scrap_clipboard_requested.connect(self.capture.scrap_clipboard)
        self.inbox.open_card.connect(self._on_inbox_open_card)
        self.til.open_card.connect(self._on_inbox_open_card)
        self.quizzes.open_card.connect(self._on_inbox_open_card)
        self.cards.open_til.connect(self._on_cards_open_til)
        self.stars.settings_requested.connect(self._on_settings_action_triggered)
        self.inbox.open_settings.connect(self._on_inbox_open_settings)
        self.runner_news = RunnerNews(self._runner, self.banner, self.statusBar().showMessage, self._show_resumed, self)
        self._runner.pools_changed.connect(self._on_runner_pools_changed)
        context.hub.message.connect(self._on_hub_message)
        context.hub.changed.connect(self._on_hub_changed)
        if context.settings.capture.watch_clipboard:
            self.watch_action.setChecked(True)
        for problem in self._app.settings_problems:
            self.statusBar().showMessage(f"settings.json: {problem}", 20_000)
        self._restore_state()

    # --- construction -------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.scrap_action = QAction("&Scrap clipboard", self)
        self.scrap_action.setShortcut(QKeySequence("Ctrl+Shift+V"))
        self.scrap_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.scrap_action.triggered.connect(self.capture.scrap_clipboard)
        file_menu.addAction(self.scrap_action)
        self.watch_action = QAction("&Watch clipboard (scrap everything copied)", self)
        self.watch_action.setCheckable(True)
        self.watch_action.toggled.connect(self._on_watch_action_toggled)
        file_menu.addAction(self.watch_action)
        file_menu.addSeparator()
        self.imports = ImportActions(self._context, self, self._say)
        self.imports.add_to(file_menu)
        file_menu.addSeparator()
        self.settings_action = QAction("Se&ttings…", self)
        # Preferences is Cmd+, on macOS and nothing on Linux: Ctrl+, everywhere (Cmd+, on macOS, the same key)
        set_shortcuts(self.settings_action, ("Ctrl+,", QKeySequence.StandardKey.Preferences))
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.settings_action.triggered.connect(self._on_settings_action_triggered)
        file_menu.addAction(self.settings_action)
        self.quit_action = QAction("&Quit", self)
        set_shortcuts(self.quit_action, ("Ctrl+Q",))  # Quit's standard keys include none on Windows
        self.quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)  # in every window of the app
        self.quit_action.triggered.connect(self.close)
        file_menu.addAction(self.quit_action)

        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addAction(self.page_actions.find)
        edit_menu.addAction(self.page_actions.delete)

        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self.page_actions.refresh)
        view_menu.addSeparator()
        for number, (key, label, _description) in enumerate(PAGES, start=1):
            action = QAction(label, self)
            action.setShortcut(QKeySequence(f"Ctrl+{number}"))
            action.triggered.connect(lambda _checked=False, k=key: self.show_page(k))
            view_menu.addAction(action)

        help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = QAction("&Keyboard shortcuts", self)
        set_shortcuts(self.shortcuts_action, ("F1",))
        self.shortcuts_action.triggered.connect(self._on_shortcuts_action_triggered)
        help_menu.addAction(self.shortcuts_action)
        self.open_data_action = QAction("Open &data folder", self)
        self.open_data_action.triggered.connect(self._on_open_data_triggered)
        help_menu.addAction(self.open_data_action)
        help_menu.addSeparator()
        self.about_action = QAction(f"&About {APP_NAME}", self)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self._on_about_action_triggered)
        help_menu.addAction(self.about_action)

    def _build_status_bar(self) -> None:
        about = self._app.about()
        self.database_label = QLabel(f"Library: {about.database}" if about.on_server else f"Data: {about.data_dir}")
        self.database_label.setToolTip(about.database)
        self.watch_indicator = WatchIndicator(self)  # while the clipboard watcher runs, with Stop
        self.watch_indicator.stop_requested.connect(self._on_watch_indicator_stop_requested)
        self.statusBar().addPermanentWidget(self.watch_indicator)
        self.statusBar().addPermanentWidget(self.database_label)
        if about.created:
            self.statusBar().showMessage("Created a new database. Welcome to SAN Desktop!", 10_000)
        elif about.upgraded_from is not None:
            self.statusBar().showMessage(
                f"Database upgraded from schema {about.upgraded_from} to {about.schema_revision}; "
                f"the previous file was backed up to {about.backup}.",
                15_000,
            )
        else:
            self.statusBar().showMessage("Ready.", 5_000)

    def _build_notifications(self) -> None:
        """Tray icon (where the platform has one) and coalesced notifications; without a tray the status
        bar carries them, with the same link."""
        self.tray = Tray(app_icon(), self)
        if Tray.available():
            self.tray.show()
        self.notice_label = QLabel()
        self.notice_label.setVisible(False)
        self.statusBar().insertPermanentWidget(0, self.notice_label)  # beside, not under, passing messages
        self._last_notice: Notice | None = None
        self.notifier = Notifier(lambda: self._app.settings.notifications, self.notify, self)
        self._context.hub.changed.connect(self.notifier.on_hub_changed)
        self.tray.show_requested.connect(self.bring_to_front)
        self.tray.scrap_requested.connect(self.capture.scrap_clipboard)
        self.tray.pause_all_toggled.connect(self._on_tray_pause_all_toggled)
        self.tray.quit_requested.connect(self.close)
        self.tray.message_clicked.connect(self.open_last_notice)
        self.notice_label.linkActivated.connect(lambda _link: self.open_last_notice())
        self._on_runner_pools_changed()
        self.quiz_reminder = QuizReminder(self._app, self._context.ops, self._remind, self)
        self.quiz_reminder.start()

    def notify(self, notice: Notice) -> None:
        """Tell ``notice`` in the tray's balloon when there is a tray, and in the status bar always."""
        self._last_notice = notice
        if self.tray.visible:
            self.tray.show_message(notice.title, notice.text)
        self.notice_label.setText(f"<a href='open'>{notice.text}</a>")
        self.notice_label.setVisible(True)

    def _remind(self, notice: Notice) -> None:
        """The daily "quizzes due", unless they are being reviewed in front of the learner right now."""
        if not (self.isActiveWindow() and self.current_page_key() == "quizzes"):
            self.notify(notice)

    def open_last_notice(self) -> None:
        """What a click on the notification does: the window in front, on the page the news is about
        (failures: the monitor filtered to them)."""
        notice = self._last_notice
        self.notice_label.setVisible(False)
        self.bring_to_front()
        if notice is None:
            return
        self.show_page(notice.page)
        if notice.failures:
            self.jobs.show_filter(JobFilter(statuses=frozenset({JobStatus.FAILED})))

    def bring_to_front(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    # --- navigation ---------------------------------------------------------------------------

    def show_page(self, key: str) -> None:
        self.navigation.setCurrentRow(self.navigation.row_of(key))

    def current_page_key(self) -> str:
        return self.navigation.key_at(self.navigation.currentRow()) or PAGES[0][0]

    def page(self, key: str) -> QWidget:
        widget = self.pages.widget(self._page_index[key])
        assert widget is not None
        return widget

    def make_about_dialog(self) -> AboutDialog:
        return AboutDialog(self._app.about(), self)

    def make_settings_dialog(self) -> SettingsDialog:
        return SettingsDialog(self._context, self, browser=self.browser_endpoint)

    def make_shortcuts_dialog(self) -> ShortcutsDialog:
        pages = [(label, self.page(key)) for key, label, _description in PAGES]
        return ShortcutsDialog.of(self.menuBar(), pages, self)

    def open_settings(self, section: str = "") -> None:
        """Settings, modal (its file, keyring and network work runs off the GUI thread while it is open),
        with the first field of ``section`` ("ai", "github") focused when given. Not deleted when closed:
        answers it asked for may still be on their way to it."""
        dialog = self.make_settings_dialog()
        dialog.focus_section(section)
        self.settings_dialog = dialog
        try:
            dialog.exec()
        finally:
            self.settings_dialog = None

    def remember_splitter(self, name: str, splitter: QSplitter) -> None:
        """Keep ``splitter``'s sizes from one start to the next (the pages' own splitters are found
        without this; for one made later, in a dialog or a sub-window kept open)."""
        self.memory.register_splitter(name, splitter)

    def _say(self, text: str) -> None:
        self.statusBar().showMessage(text, 5_000)

    def _restore_state(self) -> None:
        stored = self._context.settings.window
        self.memory.restore_geometry()
        if stored.last_page in self._page_index:
            self.show_page(stored.last_page)

    # --- drag and drop anywhere on the window -------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.capture.can_scrap(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        self.capture.scrap_mime(event.mimeData())
        event.acceptProposedAction()

    # --- slots --------------------------------------------------------------------------------

    def _on_capture_captured(self, outcome: CaptureOutcome) -> None:
        self.inbox.show_capture(outcome)
        verb = "Scrapped" if outcome.result.created else "Already scrapped"
        self.statusBar().showMessage(f"{verb}: {outcome.label}", 8_000)

    def _on_capture_rejected(self, reason: str) -> None:
        self.inbox.show_rejection(reason)
        self.statusBar().showMessage(reason, 10_000)

    def _on_inbox_open_card(self, card_id: str) -> None:
        self.show_page("cards")
        self.cards.open_card(card_id)

    def _on_cards_open_til(self, local_date: str) -> None:
        self.show_page("til")
        self.til.open_day(local_date)

    def _on_watch_action_toggled(self, checked: bool) -> None:
        self.capture.set_watching(checked)
        self.watch_indicator.set_watching(checked)
        # the last toggle is remembered whichever write runs last (the settings in use may not show the one before)
        self._watch_wanted = checked

        def remember(settings: Settings) -> Settings:
            return replace(settings, capture=replace(settings.capture, watch_clipboard=self._watch_wanted))

        self._context.ops.write(lambda: self._app.update_settings(remember), initiator=self)
        self.statusBar().showMessage(
            "Watching the clipboard: everything you copy is scrapped." if checked else "Clipboard watcher off.",
            8_000,
        )

    def _on_watch_indicator_stop_requested(self) -> None:
        self.watch_action.setChecked(False)

    def _on_navigation_current_row_changed(self, row: int) -> None:
        key = self.navigation.key_at(row)
        if key is not None:
            self.pages.setCurrentIndex(self._page_index[key])
        self.page_actions.page_changed()

    def _on_settings_action_triggered(self) -> None:
        self.open_settings()

    def _on_inbox_open_settings(self, section: str) -> None:
        self.open_settings(section)

    def _on_shortcuts_action_triggered(self) -> None:
        dialog = self.make_shortcuts_dialog()
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def _on_about_action_triggered(self) -> None:
        self.make_about_dialog().exec()

    def _show_resumed(self, ids: frozenset[str]) -> None:
        self.show_page("jobs")
        self.jobs.show_filter(JobFilter(ids=ids), ids_label=f"{len(ids)} resumed jobs")

    def _on_runner_pools_changed(self) -> None:
        settings = self._app.settings.jobs
        self.tray.set_paused(all(settings.paused(pool) for pool in JobPool))

    def _on_tray_pause_all_toggled(self, paused: bool) -> None:
        def pause_all() -> Changes:
            return self._app.set_pool_paused(JobPool.AI, paused) | self._app.set_pool_paused(JobPool.GITHUB, paused)

        said = "All jobs paused: running ones finish, no new ones start." if paused else "All jobs resumed."
        self._context.ops.write(pause_all, lambda _changes: self.statusBar().showMessage(said, 8_000))

    def _on_hub_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 15_000)

    def _on_hub_changed(self, changes: Changes, initiator: object) -> None:
        if changes.settings and initiator is not self:
            watch = self._app.settings.capture.watch_clipboard
            if watch != self.watch_action.isChecked():
                self.watch_action.setChecked(watch)
            if changes.external:
                self.statusBar().showMessage("Settings changed by another program; now in use.", 10_000)

    def _on_open_data_triggered(self) -> None:
        self.folder_dialog = open_folder(self._app.data_dir, self)

    # --- shutdown -----------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self and event.type() == QEvent.Type.Paint:
            self.removeEventFilter(self)
            # queued: it runs once this frame is painted and on screen, not in the middle of it
            QTimer.singleShot(0, self, self._announce_first_frame)
        return super().eventFilter(watched, event)

    def _on_first_frame_timer_timeout(self) -> None:
        self.removeEventFilter(self)
        self._announce_first_frame()

    def _announce_first_frame(self) -> None:
        if self._first_frame_announced:
            return
        self._first_frame_announced = True
        self._first_frame_timer.stop()
        self.first_frame.emit()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed and not self.quit_guard.ready():
            event.ignore()  # cancelled, or the other windows' edits are being saved first
            return
        if not self._closed:
            self._closed = True
            log.info("Main window closing")
            app_closing()  # an error a late worker raises from now on is logged, not shown
            state = self.memory.state(self.current_page_key())
            if self.capture.watching:
                self.capture.set_watching(False)
            self.browser_endpoint.stop()
            forget_secret()  # a copied token does not outlive the app
            self.notifier.stop()
            self.quiz_reminder.stop()
            self.tray.hide()
            self._context.shutdown()
            save_window_state(self._app, state)  # the runner and background work have stopped
            self._app.close()
            self.shut_down.emit()
        event.accept()
