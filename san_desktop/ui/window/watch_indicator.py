"""The clipboard watcher's lasting sign: a permanent status-bar widget while it runs, with Stop (a passing
message or a check mark in a closed menu is easy to forget, and everything copied meanwhile is scrapped)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from san_desktop.ui.common.look import tone_style
from san_desktop.ui.window.capture import WATCH_MIN_CHARACTERS


class WatchIndicator(QWidget):
    """Hidden until ``set_watching(True)``.

    Signals:
        stop_requested(): the user clicked Stop.
    """

    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("Watching the clipboard")
        self.label.setStyleSheet(tone_style("info"))  # stands out from passing messages
        self.label.setToolTip(
            f"Everything you copy is scrapped (text of at least {WATCH_MIN_CHARACTERS} characters, links, "
            "files). Scrap clipboard (Ctrl+Shift+V) takes shorter text."
        )
        self.stop_button = QPushButton("Stop")
        self.stop_button.setFlat(True)
        self.stop_button.setToolTip("Stop watching the clipboard (File → Watch clipboard)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label)
        layout.addWidget(self.stop_button)
        self.setVisible(False)
        self.stop_button.clicked.connect(self.stop_requested)

    def set_watching(self, watching: bool) -> None:
        self.setVisible(watching)
