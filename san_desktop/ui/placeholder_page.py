from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class PlaceholderPage(QWidget):
    """A page whose feature has not been built yet; says so plainly. No signals."""

    def __init__(self, title: str, promise: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        heading = QLabel(f"<h2>{title}</h2>")
        self.message = QLabel(f"{promise}<br><br><i>Not available in this version yet.</i>")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.message)
        layout.addStretch(1)
