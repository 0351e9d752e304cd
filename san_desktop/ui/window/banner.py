"""A dismissible line across the top of the window that tells something once, with a link to it."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget


class Banner(QFrame):
    """Hidden until ``tell``.

    Signals:
        link_activated(): the link was clicked (the banner closes itself).
    """

    link_activated = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setStyleSheet(
            "QFrame#banner { background: palette(alternate-base); border-bottom: 1px solid palette(mid); }"
        )
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self.label.linkActivated.connect(self._on_label_link_activated)
        self.close_button.clicked.connect(self.hide)
        self.hide()

    def tell(self, text: str, link: str) -> None:
        self.label.setText(f"{html.escape(text)} <a href='show'>{html.escape(link)}</a>")
        self.show()

    def _on_label_link_activated(self, _link: str) -> None:
        self.hide()
        self.link_activated.emit()
