"""File → Import…: choose a folder or file, see what would come in (read and counted off the GUI thread), import
it with a progress bar and Stop, and undo it from the summary. Closing the dialog stops what it is doing: a
reading is dropped; an import stops after its current chunk, and what it stored stays a batch that Undo
import (here, or File → Undo import) moves to the Trash, after asking."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.errors import SanError
from san_desktop.core.text import preview
from san_desktop.transfer.items import ImportKind, ImportPlan
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.transfer.undo import Confirm, ask_in_a_box, undo_import, undone_sentence

if TYPE_CHECKING:
    from san_desktop.services.trash import Trashed
    from san_desktop.transfer.importer import ImportSummary

PREVIEW_ROWS = 200  # the table shows the start of a big source; the counts say the rest

KIND_NAMES = {
    ImportKind.MARKDOWN: "a folder of notes (Markdown or an Obsidian vault)",
    ImportKind.BOOKMARKS: "a browser's bookmarks",
    ImportKind.POCKET: "a Pocket export",
    ImportKind.READWISE: "Readwise highlights",
    ImportKind.KINDLE: "Kindle highlights (My Clippings)",
    ImportKind.KARAKEEP: "a Karakeep (Hoarder) export",
    ImportKind.LINKWARDEN: "a Linkwarden backup",
    ImportKind.OMNIVORE: "an Omnivore export",
    ImportKind.OPML: "an OPML list of links",
    ImportKind.BACKUP: "a full SAN Desktop backup",
}


class _Progress(QObject):
    """Emitted on the import's thread, received on the GUI thread.

    Signals:
        advanced(int, int): items handled, items in all.
    """

    advanced = Signal(int, int)


class ImportDialog(QDialog):
    """Signals:
    imported(object): the ``ImportSummary`` of an import that stored something.
    undone(str): a sentence saying what Undo import moved to the Trash.
    """

    imported = Signal(object)
    undone = Signal(str)

    def __init__(self, context: AppContext, parent: QWidget | None = None, *, confirm: Confirm | None = None) -> None:
        super().__init__(parent)
        self.confirm = confirm or ask_in_a_box(self)  # Undo import asks first
        self.setWindowTitle("Import")
        self.setObjectName("import-dialog")
        self._context = context
        self._plan: ImportPlan | None = None
        self._summary: ImportSummary | None = None
        self._stop = threading.Event()  # the reading or import under way stops when set
        self._busy = False
        self._progress = _Progress(self)
        self._progress.advanced.connect(self._on_progress_advanced)

        self.path_edit = QLineEdit()
        self.path_edit.setReadOnly(True)
        self.path_edit.setPlaceholderText("Choose a folder of notes or a file to import")
        self.folder_button = QPushButton("Choose &folder…")
        self.folder_button.clicked.connect(self._on_folder_button_clicked)
        self.file_button = QPushButton("Choose f&ile…")
        self.file_button.clicked.connect(self._on_file_button_clicked)
        chooser = QHBoxLayout()
        chooser.addWidget(self.path_edit, 1)
        chooser.addWidget(self.folder_button)
        chooser.addWidget(self.file_button)

        self.status = QLabel(
            "Imports a folder of Markdown notes or an Obsidian vault, a browser's bookmarks (.html), Pocket's "
            "export (.html or .csv), Readwise's .csv, Kindle's My Clippings.txt, Karakeep, Linkwarden and Omnivore "
            "exports and OPML lists of links. You see what comes in before anything is stored; a note imported "
            "again updates what it made before."
        )
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Title or text", "Tags", "From", "Comes in as"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the title takes what the others leave
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.refused_label = QLabel()
        self.refused = QListWidget()
        self.refused.setMaximumHeight(90)
        self.bar = QProgressBar()
        self.bar.hide()

        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("&Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setEnabled(False)
        self.import_button.clicked.connect(self._on_import_button_clicked)
        self.undo_button = self.buttons.addButton("&Undo import", QDialogButtonBox.ButtonRole.ActionRole)
        self.undo_button.hide()
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.clicked.connect(self._on_close_button_clicked)

        layout = QVBoxLayout(self)
        layout.addLayout(chooser)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.refused_label)
        layout.addWidget(self.refused)
        layout.addWidget(self.bar)
        layout.addWidget(self.buttons)
        self._show_refusals([])
        self.resize(760, 520)

    # --- choosing and previewing --------------------------------------------------------------

    def choose(self, path: Path) -> None:
        """Read ``path`` (off the GUI thread) and show what would come in."""
        self._stop.set()  # a reading of the previous choice is dropped
        self._stop = stop = threading.Event()
        self._plan = self._summary = None
        self.path_edit.setText(str(path))
        self.import_button.setEnabled(False)
        self.undo_button.hide()
        self.table.setRowCount(0)
        self._show_refusals([])
        self.status.setText(f"Reading {path.name}…")
        app = self._context.app

        def read() -> tuple[ImportPlan, ImportSummary]:
            plan = app.read_import(path, cancelled=stop.is_set)
            return plan, app.store_import(plan, dry_run=True, cancelled=stop.is_set).value

        self._context.ops.run(
            read,
            lambda result: self._on_read(stop, *result),
            lambda exc: self._on_failed(stop, exc),
        )

    def _on_read(self, stop: threading.Event, plan: ImportPlan, counted: ImportSummary) -> None:
        if stop is not self._stop or stop.is_set():
            return  # another choice since, or the dialog closed
        self._plan = plan
        # what the dry run says of each item (`san import --dry-run` says the same), by where it is in the source
        outcomes = {outcome.source_ref: outcome for outcome in counted.outcomes}
        self.table.setRowCount(min(len(plan.items), PREVIEW_ROWS))
        for row, item in enumerate(plan.items[:PREVIEW_ROWS]):
            outcome = outcomes.get(item.entry or item.source_ref)
            said = outcome.outcome.value if outcome is not None else ""
            cells = (item.title or preview(item.content, 90), ", ".join(item.tags), item.entry or item.source_ref, said)
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if column == 3 and outcome is not None:
                    cell.setToolTip(outcome.detail)  # (merged into which, what an update keeps)
                self.table.setItem(row, column, cell)
        self._show_refusals([f"{refusal.source_ref}: {refusal.reason}" for refusal in counted.refused])
        more = f" (the first {PREVIEW_ROWS} are shown)" if len(plan.items) > PREVIEW_ROWS else ""
        updated = f"{counted.updated} updated, " if counted.updated else ""
        merged = f", {counted.merged} merged into another" if counted.merged else ""
        self.status.setText(
            f"This is {KIND_NAMES[plan.kind]}: {counted.imported} new, {updated}{counted.duplicates} already in your "
            f"library{merged}, {len(counted.refused)} left out{more}. Cards follow in the background after the "
            "import."
        )
        self.import_button.setEnabled(counted.imported + counted.updated > 0)
        if counted.imported + counted.updated == 0:
            self.status.setText(f"Nothing new to import from {Path(plan.source).name}: {counted.sentence()}")

    def _on_failed(self, stop: threading.Event, exc: SanError) -> None:
        if stop is not self._stop or (stop.is_set() and not self._busy):
            return  # a reading of an earlier choice, or of a dialog closed since (perhaps deleted by now)
        self._set_busy(False)
        self.status.setText(str(exc))

    def _show_refusals(self, lines: list[str]) -> None:
        self.refused.clear()
        self.refused.addItems(lines)
        self.refused_label.setText(f"Left out ({len(lines)}):")
        self.refused.setVisible(bool(lines))
        self.refused_label.setVisible(bool(lines))

    # --- importing ----------------------------------------------------------------------------

    def start_import(self) -> None:
        plan, stop = self._plan, self._stop
        if plan is None or self._busy:
            return
        self._set_busy(True)
        self.status.setText(f"Importing {len(plan.items)} items…")
        app, progress = self._context.app, self._progress

        self._context.ops.write(
            lambda: app.store_import(plan, cancelled=stop.is_set, progress=progress.advanced.emit),
            self._on_imported,
            lambda exc: self._on_failed(stop, exc),
            initiator=self,
        )

    def _on_imported(self, summary: ImportSummary) -> None:
        self._set_busy(False)
        self._summary = summary
        self.import_button.setEnabled(False)
        self.undo_button.setVisible(summary.batch_id is not None)
        self.status.setText(summary.sentence() + (" Their cards are being made." if summary.imported else ""))
        if summary.batch_id is not None:
            self.imported.emit(summary)

    def _on_progress_advanced(self, done: int, total: int) -> None:
        self.bar.setMaximum(max(total, 1))
        self.bar.setValue(done)

    def undo(self) -> None:
        """Ask (saying how many of the scraps were edited since), then move the import to the Trash."""
        summary = self._summary
        if summary is None or summary.batch_id is None or self._busy:
            return
        self._set_busy(True)

        def undone(trashed: Trashed) -> None:
            self._set_busy(False)
            self._summary = None
            self.undo_button.hide()
            said = undone_sentence(trashed)
            self.status.setText(said)
            self.undone.emit(said)

        undo_import(
            self._context,
            summary.batch_id,
            self.confirm,
            undone,
            failed=lambda exc: self._on_failed(self._stop, exc),
            declined=lambda: self._set_busy(False),
            initiator=self,
        )

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.bar.setVisible(busy)
        self.bar.setValue(0)
        for button in (self.folder_button, self.file_button, self.import_button, self.undo_button):
            button.setEnabled(not busy and (button is not self.import_button or self._plan is not None))
        self.close_button.setText("&Stop" if busy else "&Close")

    @property
    def busy(self) -> bool:
        return self._busy

    # --- slots --------------------------------------------------------------------------------

    def _on_folder_button_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Import a folder of notes")
        if folder:
            self.choose(Path(folder))

    def _on_file_button_clicked(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self,
            "Import a file",
            "",
            "Importable files (*.html *.htm *.csv *.txt *.zip);;All files (*)",
        )
        if path:
            self.choose(Path(path))

    def _on_import_button_clicked(self) -> None:
        self.start_import()

    def _on_undo_button_clicked(self) -> None:
        self.undo()

    def _on_close_button_clicked(self) -> None:
        if self._busy:
            self._stop.set()  # the import stops after its chunk; its summary says what was stored
            self.status.setText("Stopping…")
            return
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._stop.set()
        super().closeEvent(event)
