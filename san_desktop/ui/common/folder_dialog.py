"""Opening a folder in the file manager, and what is shown when there is none to open it (a minimal
desktop, a container, a session without ``xdg-open``): its path, selectable, with a Copy button."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ui.common.look import SPACE_L, SPACE_M, SPACE_S


class FolderPathDialog(QDialog):
    """Says where ``path`` is when no program could open it. No signals of its own."""

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Data folder")
        self.setMinimumWidth(460)
        self.message = QLabel("No file manager could open the folder. This is where it is:")
        self.message.setWordWrap(True)
        self.path = QLineEdit(str(path))
        self.path.setReadOnly(True)
        self.path.setMinimumWidth(self.path.fontMetrics().horizontalAdvance(str(path)) + 2 * SPACE_M)
        self.path.setCursorPosition(0)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the path to the clipboard")
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        row = QHBoxLayout()
        row.setSpacing(SPACE_S)
        row.addWidget(self.path, 1)
        row.addWidget(self.copy_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_L, SPACE_L, SPACE_L, SPACE_M)
        layout.setSpacing(SPACE_M)
        layout.addWidget(self.message)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.path.selectAll()
        self.path.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_copy_button_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.path.text())
        self.copy_button.setText("Copied")


def open_folder(path: Path, parent: QWidget | None = None) -> FolderPathDialog | None:
    """Open ``path`` in the file manager; when nothing can, show (without waiting for it) the dialog with
    the path and return it."""
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return None
    dialog = FolderPathDialog(path, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
