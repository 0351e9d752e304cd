from __future__ import annotations

import logging

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from san_desktop import APP_NAME
from san_desktop.app import Changes
from san_desktop.core.enums import JobPool, JobStatus
from san_desktop.jobs.breaker import BreakerState
from san_desktop.jobs.recovery import SweepReport
from san_desktop.jobs.runner import BreakerChange
from san_desktop.queue.monitor import JobFilter
from san_desktop.ui.about_dialog import AboutDialog
from san_desktop.ui.banner import Banner
from san_desktop.ui.capture import CaptureController, CaptureOutcome
from san_desktop.ui.cards_page import CardsPage
from san_desktop.ui.context import AppContext
from san_desktop.ui.inbox_page import InboxPage
from san_desktop.ui.jobs_page import JobsPage
from san_desktop.ui.notifier import Notice, Notifier
from san_desktop.ui.placeholder_page import PlaceholderPage
from san_desktop.ui.quiz_reminder import QuizReminder
from san_desktop.ui.quizzes_page import QuizzesPage
from san_desktop.ui.resources import app_icon
from san_desktop.ui.settings_dialog import SettingsDialog
from san_desktop.ui.stars_page import StarsPage
from san_desktop.ui.til_page import TilPage
from san_desktop.ui.tray import Tray

log = logging.getLogger(__name__)

# (key, navigation label, what the page will do)
PAGES: tuple[tuple[str, str, str], ...] = (
    ("inbox", "Inbox", "Everything you scrap, with the state of its analysis."),
    ("cards", "Cards", "Knowledge cards made from your scraps."),
    ("til", "TIL", 'A "Today I Learned" note per day: generate it, review and edit it, commit it to GitHub.'),
    ("quizzes", "Quizzes", "Recall quizzes that bring back what you learned."),
    ("stars", "Stars", "Recommendations from your starred GitHub repositories."),
    ("jobs", "Jobs", "Background work with its state, errors and retries."),
)


class MainWindow(QMainWindow):
    """The SAN Desktop window: navigation, pages, capture (shortcut, drops, clipboard watcher), status.

    Signals:
        shut_down(): emitted once, after closing has stopped the job runner and released the database
            and the instance lock.
    """

    shut_down = Signal()

    def __init__(self, context: AppContext) -> None:
        super().__init__()
        self._context = context
        self._app = context.app
        self._runner = context.runner
        self._closed = False
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.resize(1100, 720)
        self.setMinimumSize(QSize(640, 420))
        self.setAcceptDrops(True)

        self.capture = CaptureController(context.app, context.ops, self)
        self.inbox = InboxPage(context)
        self.cards = CardsPage(context)
        self.jobs = JobsPage(context)
        self.til = TilPage(context)
        self.quizzes = QuizzesPage(context)
        self.stars = StarsPage(context)
        built: dict[str, QWidget] = {
            "inbox": self.inbox,
            "cards": self.cards,
            "til": self.til,
            "quizzes": self.quizzes,
            "stars": self.stars,
            "jobs": self.jobs,
        }

        self.navigation = QListWidget()
        self.navigation.setObjectName("navigation")
        self.navigation.setFixedWidth(170)
        self.navigation.setStyleSheet("QListWidget#navigation::item { padding: 8px 12px; }")
        self.pages = QStackedWidget()
        self._page_index: dict[str, int] = {}
        for key, label, promise in PAGES:
            page = built.get(key) or PlaceholderPage(label, promise)
            self._page_index[key] = self.pages.addWidget(page)
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, key)
            self.navigation.addItem(item)
        self.navigation.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.navigation.setCurrentRow(0)

        self.banner = Banner()
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.banner)
        layout = QHBoxLayout()
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.navigation)
        layout.addWidget(self.pages, 1)
        outer.addLayout(layout, 1)
        self.setCentralWidget(central)
        self._sweeps_seen = 0
        self._resumed: frozenset[str] = frozenset()

        self._build_menus()
        self._build_status_bar()
        self._build_notifications()
        self.capture.captured.connect(self._on_capture_captured)
        self.capture.rejected.connect(self._on_capture_rejected)
        self.inbox.scrap_clipboard_requested.connect(self.capture.scrap_clipboard)
        self.inbox.open_card.connect(self._on_inbox_open_card)
        self.til.open_card.connect(self._on_inbox_open_card)
        self.quizzes.open_card.connect(self._on_inbox_open_card)
        self.stars.settings_requested.connect(self._on_settings_action_triggered)
        self._runner.stalled.connect(self._on_runner_stalled)
        self._runner.breaker_changed.connect(self._on_runner_breaker_changed)
        self._runner.sweep_finished.connect(self._on_runner_sweep_finished)
        self._runner.pools_changed.connect(self._on_runner_pools_changed)
        self.banner.link_activated.connect(self._on_banner_link_activated)
        context.hub.message.connect(self._on_hub_message)
        context.hub.changed.connect(self._on_hub_changed)
        if context.settings.capture.watch_clipboard:
            self.watch_action.setChecked(True)
        for problem in self._app.settings_problems:
            self.statusBar().showMessage(f"settings.json: {problem}", 20_000)

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
        settings_action = QAction("Se&ttings…", self)
        settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        settings_action.triggered.connect(self._on_settings_action_triggered)
        file_menu.addAction(settings_action)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        view_menu = self.menuBar().addMenu("&View")
        for number, (key, label, _promise) in enumerate(PAGES, start=1):
            action = QAction(label, self)
            action.setShortcut(QKeySequence(f"Ctrl+{number}"))
            action.triggered.connect(lambda _checked=False, k=key: self.show_page(k))
            view_menu.addAction(action)

        help_menu = self.menuBar().addMenu("&Help")
        self.about_action = QAction(f"&About {APP_NAME}", self)
        self.about_action.triggered.connect(self._on_about_action_triggered)
        help_menu.addAction(self.about_action)
        open_data = QAction("Open &data folder", self)
        open_data.triggered.connect(self._on_open_data_triggered)
        help_menu.addAction(open_data)

    def _build_status_bar(self) -> None:
        about = self._app.about()
        self.database_label = QLabel(f"Data: {about.data_dir}")
        self.database_label.setToolTip(str(about.database_file))
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
        self._runner.job_changed.connect(self.notifier.on_job_event)
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
        self.navigation.setCurrentRow(self._page_index[key])

    def current_page_key(self) -> str:
        item = self.navigation.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole))

    def page(self, key: str) -> QWidget:
        widget = self.pages.widget(self._page_index[key])
        assert widget is not None
        return widget

    def make_about_dialog(self) -> AboutDialog:
        return AboutDialog(self._app.about(), self)

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

    def _on_watch_action_toggled(self, checked: bool) -> None:
        self.capture.set_watching(checked)
        if checked != self._context.settings.capture.watch_clipboard:
            settings = self._context.with_capture(watch_clipboard=checked)
            self._context.ops.write(lambda: self._app.save_settings(settings, overwrite=True), initiator=self)
        self.statusBar().showMessage(
            "Watching the clipboard: everything you copy is scrapped." if checked else "Clipboard watcher off.",
            8_000,
        )

    def _on_settings_action_triggered(self) -> None:
        SettingsDialog(self._context, self).exec()

    def _on_about_action_triggered(self) -> None:
        self.make_about_dialog().exec()

    def _on_runner_stalled(self, job_ids: list[str]) -> None:
        self.statusBar().showMessage(
            f"{len(job_ids)} job(s) have been running for unusually long; see Jobs. They are not started twice.",
            30_000,
        )

    def _on_runner_breaker_changed(self, change: BreakerChange) -> None:
        if change.status.state is BreakerState.OPEN:
            self.statusBar().showMessage(
                f"AI server unreachable or failing: AI jobs {change.status.describe()}.", 30_000
            )
        elif change.status.state is BreakerState.CLOSED:
            self.statusBar().showMessage("AI server answers again; AI jobs resumed.", 10_000)

    def _on_runner_sweep_finished(self, report: SweepReport) -> None:
        self._sweeps_seen += 1
        resumed = report.requeued_interrupted
        if not resumed:
            return
        self._resumed = frozenset(resumed)
        count = len(resumed)
        jobs = f"{count} jobs" if count != 1 else "1 job"
        were = "were" if count != 1 else "was"
        if self._sweeps_seen == 1:
            text = f"{jobs} interrupted when SAN Desktop last closed unexpectedly {were} resumed."
        else:
            text = f"{jobs} interrupted when another SAN Desktop process ended unexpectedly {were} resumed."
        self.banner.tell(text, "Show them")

    def _on_banner_link_activated(self) -> None:
        self.show_page("jobs")
        self.jobs.show_filter(JobFilter(ids=self._resumed), ids_label=f"{len(self._resumed)} resumed jobs")

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
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._app.data_dir)))

    # --- shutdown -----------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            log.info("Main window closing")
            if self.capture.watching:
                self.capture.set_watching(False)
            self.notifier.stop()
            self.quiz_reminder.stop()
            self.tray.hide()
            self._context.shutdown()
            self._app.close()
            self.shut_down.emit()
        event.accept()
