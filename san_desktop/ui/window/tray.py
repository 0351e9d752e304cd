"""The tray icon: Show, Scrap clipboard, Pause all, Quit, and the notifications' balloons."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from san_desktop import APP_NAME


class Tray(QObject):
    """Made always; shown only where the platform has a system tray (``available``).

    Signals:
        show_requested(): Show, or a click on the icon.
        scrap_requested(): Scrap clipboard.
        pause_all_toggled(bool): Pause all checked (True) or unchecked.
        quit_requested(): Quit.
        message_clicked(): the last balloon was clicked.
    """

    show_requested = Signal()
    scrap_requested = Signal()
    pause_all_toggled = Signal(bool)
    quit_requested = Signal()
    message_clicked = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(icon, self)
        self.icon.setToolTip(APP_NAME)
        self.menu = QMenu()
        self.show_action = QAction("&Show SAN Desktop", self)
        self.scrap_action = QAction("&Scrap clipboard", self)
        self.pause_action = QAction("&Pause all jobs", self)
        self.pause_action.setCheckable(True)
        self.quit_action = QAction("&Quit", self)
        for action in (self.show_action, self.scrap_action, self.pause_action):
            self.menu.addAction(action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.icon.setContextMenu(self.menu)

        self.show_action.triggered.connect(self.show_requested)
        self.scrap_action.triggered.connect(self.scrap_requested)
        self.pause_action.toggled.connect(self.pause_all_toggled)
        self.quit_action.triggered.connect(self.quit_requested)
        self.icon.activated.connect(self._on_icon_activated)
        self.icon.messageClicked.connect(self.message_clicked)

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    @property
    def visible(self) -> bool:
        return self.icon.isVisible()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def show_message(self, title: str, text: str) -> None:
        self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 8000)

    def set_paused(self, paused: bool) -> None:
        """Reflect the pools' state without asking for a change."""
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(paused)
        self.pause_action.blockSignals(False)

    def _on_icon_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_requested.emit()
