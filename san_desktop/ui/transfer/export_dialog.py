"""Exporting the library: to Anki (the quizzes, and the cards if asked) as a package, to Markdown (the cards
and TIL notes) into a folder, or all of it as a backup zip. The export runs off the GUI thread; its summary,
or what went wrong, is shown in the dialog, which stays open for another. A file that is there already is
replaced only when the person says so, asked by its name (the export tells: it refuses first, and is run
again told to replace it); a link, a folder or a device is refused without a question."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.errors import SanError
from san_desktop.core.user_files import TargetExistsError
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import SPACE_L, SPACE_M, SPACE_S, tone_style

if TYPE_CHECKING:
    from san_desktop.transfer.anki_export import AnkiExport
    from san_desktop.transfer.backup import BackupSummary
    from san_desktop.transfer.bookmarks_export import BookmarksExport
    from san_desktop.transfer.markdown_export import MarkdownExport

ANKI_NAME = "SAN.apkg"  # offered in the file picker
BACKUP_NAME = "SAN backup.zip"
BOOKMARKS_NAME = "SAN links.html"
# the picker does not ask about a file that is there: the export does, by its name, once (typed or picked)
ASKED_LATER = QFileDialog.Option.DontConfirmOverwrite


class ExportDialog(QDialog):
    """Signals:
    exported(object): the export's result (``AnkiExport``, ``MarkdownExport``, ``BookmarksExport`` or
        ``BackupSummary``), once it is shown.
    export_failed(str): what went wrong (or that the person kept the file there), as shown.
    """

    exported = Signal(object)
    export_failed = Signal(str)

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.setMinimumWidth(520)
        self._app = context.app
        self._ops = context.ops
        self.running = False

        self.anki_choice = QRadioButton("Anki package (.apkg): the recall quizzes, a deck per category")
        self.include_cards = QCheckBox("Include the knowledge cards as basic notes")
        self.markdown_choice = QRadioButton("Markdown folder (e.g. an Obsidian vault): the cards and TIL notes")
        self.bookmarks_choice = QRadioButton("Bookmarks (.html): the links, for a browser, Karakeep or Linkwarden")
        self.backup_choice = QRadioButton(
            "Full backup (.zip): everything, restored with `san import FILE.zip` into an empty data folder"
        )
        choices = QButtonGroup(self)
        choices.addButton(self.anki_choice)
        choices.addButton(self.markdown_choice)
        choices.addButton(self.bookmarks_choice)
        choices.addButton(self.backup_choice)
        self.backup_choice.toggled.connect(self._on_backup_choice_toggled)
        self.bookmarks_choice.toggled.connect(self._on_bookmarks_choice_toggled)
        self.anki_choice.setChecked(True)
        self.anki_choice.toggled.connect(self._on_anki_choice_toggled)

        self.destination = QLineEdit()
        self.destination.textChanged.connect(self._on_destination_text_changed)
        self.browse_button = QPushButton("Choose…")
        self.browse_button.clicked.connect(self._on_browse_button_clicked)
        row = QHBoxLayout()
        row.setSpacing(SPACE_S)
        row.addWidget(self.destination, 1)
        row.addWidget(self.browse_button)

        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.clicked.connect(self._on_export_button_clicked)
        self.buttons.rejected.connect(self.reject)

        cards_row = QHBoxLayout()
        cards_row.setContentsMargins(SPACE_L, 0, 0, 0)
        cards_row.addWidget(self.include_cards)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_L, SPACE_L, SPACE_L, SPACE_M)
        layout.setSpacing(SPACE_M)
        layout.addWidget(self.anki_choice)
        layout.addLayout(cards_row)
        layout.addWidget(self.markdown_choice)
        layout.addWidget(self.bookmarks_choice)
        layout.addWidget(self.backup_choice)
        layout.addWidget(QLabel("Export to:"))
        layout.addLayout(row)
        layout.addWidget(self.outcome)
        layout.addWidget(self.buttons)
        self._on_anki_choice_toggled(True)

    @property
    def to_anki(self) -> bool:
        return self.anki_choice.isChecked()

    def _update_button(self) -> None:
        self.export_button.setEnabled(bool(self.destination.text().strip()) and not self.running)

    def _on_anki_choice_toggled(self, checked: bool) -> None:
        self.include_cards.setEnabled(checked)
        self._show_placeholder()

    def _on_backup_choice_toggled(self, _checked: bool) -> None:
        self._show_placeholder()

    def _on_bookmarks_choice_toggled(self, _checked: bool) -> None:
        self._show_placeholder()

    def _show_placeholder(self) -> None:
        if self.to_anki:
            example = f"a file, e.g. {Path.home() / ANKI_NAME}"
        elif self.backup_choice.isChecked():
            example = f"a file, e.g. {Path.home() / BACKUP_NAME}"
        elif self.bookmarks_choice.isChecked():
            example = f"a file, e.g. {Path.home() / BOOKMARKS_NAME}"
        else:
            example = f"a folder, e.g. {Path.home() / 'SAN'}"
        self.destination.setPlaceholderText(example)
        self._update_button()

    def _on_destination_text_changed(self, _text: str) -> None:
        self._update_button()

    def _on_browse_button_clicked(self) -> None:
        current = self.destination.text().strip()
        if self.to_anki:
            chosen = self._file_to_save(
                "Export to Anki", current or str(Path.home() / ANKI_NAME), "Anki package", ".apkg"
            )
        elif self.backup_choice.isChecked():
            chosen = self._file_to_save("Back up to", current or str(Path.home() / BACKUP_NAME), "Zip archive", ".zip")
        elif self.bookmarks_choice.isChecked():
            chosen = self._file_to_save(
                "Export the links to", current or str(Path.home() / BOOKMARKS_NAME), "Bookmarks file", ".html"
            )
        else:
            chosen = QFileDialog.getExistingDirectory(self, "Export Markdown into", current or str(Path.home()))
        if chosen:
            self.destination.setText(chosen)

    def _file_to_save(self, title: str, start: str, kind: str, suffix: str) -> str:
        """The file the person picks, starting at ``start``, named with ``suffix``."""
        chosen, _filter = QFileDialog.getSaveFileName(self, title, start, f"{kind} (*{suffix})", options=ASKED_LATER)
        return chosen + suffix if chosen and not chosen.lower().endswith(suffix) else chosen

    def _on_export_button_clicked(self) -> None:
        self._export(Path(self.destination.text().strip()).expanduser().absolute(), overwrite=False)

    def _export(self, path: Path, *, overwrite: bool) -> None:
        to_anki, cards = self.to_anki, self.include_cards.isChecked()  # plain values for the worker
        app = self._app
        self.running = True
        self._update_button()
        self.outcome.setStyleSheet(tone_style("muted"))
        self.outcome.setText("Exporting…")
        backup, bookmarks = self.backup_choice.isChecked(), self.bookmarks_choice.isChecked()

        def call() -> AnkiExport | MarkdownExport | BackupSummary | BookmarksExport:
            if to_anki:
                return app.export_anki(path, cards=cards, overwrite=overwrite)
            if bookmarks:
                return app.export_bookmarks(path, overwrite=overwrite)
            return app.export_backup(path, overwrite=overwrite) if backup else app.export_markdown(path)

        self._ops.run(call, self._on_export_done, self._on_export_failed, on_finished=self._on_export_finished)

    def _replace_confirmed(self, path: Path) -> bool:
        answer = QMessageBox.question(
            self,
            "Replace the file?",
            f"{path} already exists.\n\nReplace it with this export? It stays as it is until the new file is whole.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _on_export_finished(self) -> None:
        self.running = False
        self._update_button()

    def _on_export_done(self, result: AnkiExport | MarkdownExport | BackupSummary | BookmarksExport) -> None:
        self.outcome.setStyleSheet("")
        self.outcome.setText(result.summary)
        self.exported.emit(result)

    def _on_export_failed(self, exc: SanError) -> None:
        if isinstance(exc, TargetExistsError):
            if self._replace_confirmed(exc.path):
                self._export(exc.path, overwrite=True)
                return
            message = f"Nothing was exported: {exc.path} already exists and was kept."
        else:
            message = str(exc)
        self.outcome.setStyleSheet(tone_style("error"))
        self.outcome.setText(message)
        self.export_failed.emit(message)
