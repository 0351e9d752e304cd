"""Undo import, as the import dialog's button and File → Undo import both do it: what would go is counted off
the GUI thread, the person is asked (how many scraps, how many of them were edited or have answered quizzes),
and only then is the import moved to the Trash, as one entry that restores it all."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

from san_desktop.core.errors import SanError
from san_desktop.ui.common.context import AppContext

if TYPE_CHECKING:
    from san_desktop.services.trash import Trashed
    from san_desktop.transfer.import_batches import UndoPreview

Confirm = Callable[[str], bool]


def undo_import(
    context: AppContext,
    batch_id: str,
    confirm: Confirm,
    done: Callable[[Trashed], None],
    *,
    failed: Callable[[SanError], None] | None = None,
    declined: Callable[[], None] | None = None,
    initiator: object | None = None,
) -> None:
    """Ask ``confirm`` with what the undo would move to the Trash; if it agrees, undo, then ``done``."""
    app = context.app

    def asked(preview: UndoPreview) -> None:
        when = preview.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        if not confirm(preview.question(when)):
            if declined is not None:
                declined()
            return
        context.ops.write(lambda: app.undo_import(batch_id), done, failed, initiator=initiator)

    context.ops.run(lambda: app.undo_import_preview(batch_id), asked, failed)


def undone_sentence(trashed: Trashed) -> str:
    count = len(trashed.scrap_ids)
    return (
        f"Import undone: {count:,} scrap{'s' if count != 1 else ''} moved to the Trash "
        "(restore them there, with their cards and quizzes)."
    )


def ask_in_a_box(parent: QWidget) -> Confirm:
    """A confirmation with Move to Trash and Cancel (Cancel the default)."""

    def ask(question: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Question, "Undo import", question, parent=parent)
        move = box.addButton("&Move to Trash", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
        box.exec()
        return box.clickedButton() is move

    return ask
