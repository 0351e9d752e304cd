from __future__ import annotations

from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from san_desktop import APP_NAME
from san_desktop.services.about import AboutInfo
from san_desktop.ui.common.folder_dialog import open_folder
from san_desktop.ui.common.resources import app_icon


class AboutDialog(QDialog):
    """Version, where the data lives, and a way to open that folder. No signals of its own."""

    def __init__(self, about: AboutInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self._data_dir = about.data_dir

        heading = QLabel(f"<h2>{APP_NAME}</h2><p>Scrap what you read; keep what you learn.</p>")
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(64, 64))

        form = QFormLayout()
        self.version_label = self._selectable(about.version)
        self.data_dir_label = self._selectable(str(about.data_dir))
        form.addRow("Version:", self.version_label)
        form.addRow("Data directory:", self.data_dir_label)
        database = about.database if about.on_server else Path(about.database).name
        form.addRow("Database:", self._selectable(f"{database} (schema {about.schema_revision})"))
        form.addRow("Log file:", self._selectable(str(about.log_file)))
        runs_on = f"PySide6 {pyside_version}, {about.runs_on}"
        form.addRow("Runs on:", self._selectable(runs_on))
        self.model_label = self._selectable(about.embedded_model)
        form.addRow("Embedded model:", self.model_label)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        open_folder = QPushButton("Open data folder")
        buttons.addButton(open_folder, QDialogButtonBox.ButtonRole.ActionRole)
        open_folder.clicked.connect(self._on_open_folder_clicked)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(icon)
        layout.addWidget(heading)
        layout.addLayout(form)
        layout.addWidget(buttons)

    @staticmethod
    def _selectable(text: str) -> QLabel:
        label = QLabel(text)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _on_open_folder_clicked(self) -> None:
        open_folder(self._data_dir, self)  # shows the path when nothing can open it
