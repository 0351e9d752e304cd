"""The window's File menu entries for imports and exports: Import… (the dialog), Undo import (the recent
imports, each moved to the Trash after a confirmation) and Export… (Anki, Markdown or a full backup). The list of
imports is read off the GUI thread whenever scraps change, so the menu shows it without a query."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from san_desktop.app import Changes
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.transfer.export_dialog import ExportDialog
from san_desktop.ui.transfer.import_dialog import ImportDialog
from san_desktop.ui.transfer.undo import Confirm, ask_in_a_box, undo_import, undone_sentence

if TYPE_CHECKING:  # (the importer loads with the first read of the imports, after the window's first frame)
    from san_desktop.services.trash import Trashed
    from san_desktop.transfer.import_batches import ImportBatchInfo
    from san_desktop.transfer.importer import ImportSummary


class ImportActions(QObject):
    """No signals: outcomes go to ``say`` (the status bar)."""

    def __init__(
        self, context: AppContext, window: QWidget, say: Callable[[str], None], confirm: Confirm | None = None
    ) -> None:
        super().__init__(window)
        self._context = context
        self._window = window
        self._say = say
        self.confirm = confirm or ask_in_a_box(window)  # (the import dialog asks through it too)
        self.dialog: ImportDialog | None = None
        self.batches: list[ImportBatchInfo] = []
        self.import_action = QAction("&Import…", self)
        self.import_action.setShortcut(QKeySequence("Ctrl+Shift+I"))
        self.import_action.triggered.connect(self._on_import_action_triggered)
        self.export_action = QAction("&Export…", self)
        self.export_action.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.export_action.triggered.connect(self._on_export_action_triggered)
        self.export_dialog: ExportDialog | None = None
        self.undo_menu = QMenu("&Undo import", window)
        self.undo_menu.aboutToShow.connect(self._on_undo_menu_about_to_show)
        context.hub.changed.connect(self._on_hub_changed)
        self.read_batches()

    def add_to(self, menu: QMenu) -> None:
        menu.addAction(self.import_action)
        menu.addMenu(self.undo_menu)
        menu.addAction(self.export_action)

    def open_dialog(self) -> ImportDialog:
        """The import dialog (the one open, if any)."""
        if self.dialog is None or (not self.dialog.isVisible() and not self.dialog.busy):
            if self.dialog is not None:
                self.dialog.deleteLater()
            self.dialog = ImportDialog(self._context, self._window, confirm=lambda question: self.confirm(question))
            self.dialog.imported.connect(self._on_dialog_imported)
            self.dialog.undone.connect(self._say)
        if self.dialog.isVisible():
            self.dialog.raise_()  # (asked again while open: to the front)
        else:
            self.dialog.show()
        return self.dialog

    def read_batches(self) -> None:
        app = self._context.app
        # the importer (the ORM, numpy) is made on the worker when first asked: not before the first frame
        self._context.ops.run(lambda: app.imports.batches(), self._on_batches_read)

    def undo(self, batch: ImportBatchInfo) -> None:
        """Ask (saying how many of its scraps were edited since), then move the import to the Trash."""

        def done(trashed: Trashed) -> None:
            self._say(undone_sentence(trashed))

        undo_import(self._context, batch.id, self.confirm, done, failed=lambda exc: self._say(str(exc)), initiator=self)

    # --- slots --------------------------------------------------------------------------------

    def _on_import_action_triggered(self) -> None:
        self.open_dialog()

    def open_export_dialog(self) -> ExportDialog:
        """The export dialog (one, kept for the window: it remembers the last destination)."""
        if self.export_dialog is None:
            self.export_dialog = ExportDialog(self._context, self._window)
            self.export_dialog.exported.connect(lambda result: self._say(result.summary))
        if self.export_dialog.isVisible():
            self.export_dialog.raise_()
        else:
            self.export_dialog.show()
        return self.export_dialog

    def _on_export_action_triggered(self) -> None:
        self.open_export_dialog()

    def _on_dialog_imported(self, summary: ImportSummary) -> None:
        self._say(summary.sentence())

    def _on_batches_read(self, batches: list[ImportBatchInfo]) -> None:
        self.batches = batches

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if changes.scraps or changes.library:
            self.read_batches()

    def _on_undo_menu_about_to_show(self) -> None:
        self.undo_menu.clear()
        if not self.batches:
            self.undo_menu.addAction("No import to undo").setEnabled(False)
            return
        for batch in self.batches:
            when = batch.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
            stopped = ", stopped part way" if not batch.finished else ""
            action = self.undo_menu.addAction(f"{when}: {batch.imported:,} from {batch.source}{stopped}")
            action.triggered.connect(lambda _checked=False, b=batch: self.undo(b))
