"""The review-and-commit window of a day's TIL: a markdown editor beside a live preview, the version
history with a diff between any two, Save (a new edited version), and Commit to GitHub or a local
repository (``commit_tab``). Unsaved edits are never lost: closing the window asks (and quitting the app
asks once for every window, ``ui.window.quitting``), and a draft kept on disk while typing is offered back
the next time the window opens. The window fits the screen it opens on."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QScreen
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.core.errors import SanError
from san_desktop.core.markdown_html import to_safe_html
from san_desktop.services.til import TilView
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import fit_on_screen, tone_style
from san_desktop.ui.common.ops import LatestOnly
from san_desktop.ui.common.unsaved import AskUnsaved, Unsaved, ask_unsaved
from san_desktop.ui.til.commit_tab import CommitTab

PREVIEW_DELAY_MS = 400
DRAFT_DELAY_MS = 1000
DRAFTS = "drafts"
LARGEST = QSize(1200, 800)  # on a screen with room for it; smaller ones get 90% of their free area


class TilReviewWindow(QWidget):
    """A window of its own (no parent), closed with the main one when the app quits.

    Signals:
        saved(int): a new edited version was saved.
        closed(): the window closed (its edits saved or dropped).
    """

    saved = Signal(int)
    closed = Signal()

    def __init__(
        self,
        context: AppContext,
        local_date: str,
        parent: QWidget | None = None,
        *,
        ask: AskUnsaved = ask_unsaved,
        screen: QScreen | None = None,
    ) -> None:
        """``ask``: the Save / Discard / Cancel question; ``screen``: the one it opens on (the primary one)."""
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle(f"TIL {local_date} — review and commit")
        self._context = context
        self._app = context.app
        self.local_date = local_date
        self._view: TilView | None = None
        self._saved_text = ""
        self._ask = ask
        self._discarded = False  # the edits were dropped (quitting said Discard): close without asking
        self._closed = False
        self._saving_to_close = False  # Save was the answer to closing: it closes once saved
        self._reads = LatestOnly(context.ops)
        self._diffs = LatestOnly(context.ops)

        self.editor = QPlainTextEdit()
        self.preview = QTextBrowser()
        self.preview.setOpenLinks(False)
        self.draft_notice = QLabel()
        self.draft_notice.setVisible(False)
        self.restore_button = QPushButton("Restore unsaved draft")
        self.restore_button.setVisible(False)
        self.save_button = QPushButton("Save")
        self.save_button.setShortcut("Ctrl+S")
        self.save_state = QLabel()
        self.save_state.setWordWrap(True)
        self.save_state.setStyleSheet(tone_style("error"))
        self.versions = QListWidget()
        self.diff_left = QComboBox()
        self.diff_right = QComboBox()
        self.diff = QTextBrowser()
        self.commit = CommitTab(context, local_date, self.dirty)

        editor_side = QWidget()
        editor_layout = QVBoxLayout(editor_side)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        draft_row = QHBoxLayout()
        draft_row.addWidget(self.draft_notice, 1)
        draft_row.addWidget(self.restore_button)
        editor_layout.addLayout(draft_row)
        editor_layout.addWidget(self.editor, 1)
        save_row = QHBoxLayout()
        save_row.addWidget(self.save_state, 1)
        save_row.addWidget(self.save_button)
        editor_layout.addLayout(save_row)
        editing = QSplitter()
        editing.addWidget(editor_side)
        editing.addWidget(self.preview)

        history = QWidget()
        history_layout = QVBoxLayout(history)
        compare = QHBoxLayout()
        compare.addWidget(QLabel("Compare"))
        compare.addWidget(self.diff_left)
        compare.addWidget(QLabel("with"))
        compare.addWidget(self.diff_right)
        compare.addStretch(1)
        history_layout.addWidget(self.versions, 1)
        history_layout.addLayout(compare)
        history_layout.addWidget(self.diff, 2)

        self.tabs = QTabWidget()
        self.tabs.addTab(editing, "Edit")
        self.tabs.addTab(history, "Versions")
        self.tabs.addTab(self.commit, "Commit")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)

        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(PREVIEW_DELAY_MS)
        self._preview_timer.timeout.connect(self._on_preview_timer_timeout)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self._on_draft_timer_timeout)
        self.editor.textChanged.connect(self._on_editor_text_changed)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.restore_button.clicked.connect(self._on_restore_button_clicked)
        self.diff_left.activated.connect(lambda _i: self._show_diff())
        self.diff_right.activated.connect(lambda _i: self._show_diff())
        self.preview.anchorClicked.connect(self._on_preview_anchor_clicked)
        fit_on_screen(self, LARGEST, screen)
        self.reload()

    # --- loading ------------------------------------------------------------------------------

    @property
    def draft_path(self) -> Path:
        return self._app.data_dir / DRAFTS / f"{self.local_date}.md"

    def dirty(self) -> bool:
        return self.editor.toPlainText() != self._saved_text

    def reload(self) -> None:
        self._reads.run(lambda: self._app.til.get(self.local_date), self._loaded)

    def _loaded(self, view: TilView) -> None:
        first = self._view is None
        self._view = view
        if first or not self.dirty():
            self._saved_text = view.markdown or ""
            self.editor.blockSignals(True)
            self.editor.setPlainText(self._saved_text)
            self.editor.blockSignals(False)
            self._on_preview_timer_timeout()
        self.versions.clear()
        self.diff_left.clear()
        self.diff_right.clear()
        for version in reversed(view.versions):
            label = f"v{version.version} {version.kind.value.lower()} {version.created_at.astimezone():%Y-%m-%d %H:%M}"
            self.versions.addItem(label)
            self.diff_left.addItem(f"v{version.version}", version.version)
            self.diff_right.addItem(f"v{version.version}", version.version)
        if self.diff_left.count() > 1:
            self.diff_left.setCurrentIndex(1)
        if first:
            self._offer_draft()
        self._show_diff()

    def _offer_draft(self) -> None:
        draft = self.draft_path
        if draft.exists() and draft.read_text(encoding="utf-8") != self._saved_text:
            self.draft_notice.setText("An unsaved draft from your last session is kept.")
            self.draft_notice.setVisible(True)
            self.restore_button.setVisible(True)

    def _show_diff(self) -> None:
        left, right = self.diff_left.currentData(), self.diff_right.currentData()
        if left is None or right is None:
            self.diff.clear()
            return

        def compare() -> str:
            old = self._app.til.version_text(self.local_date, int(left)).splitlines()
            new = self._app.til.version_text(self.local_date, int(right)).splitlines()
            lines = difflib.unified_diff(old, new, f"v{left}", f"v{right}", lineterm="")
            return "\n".join(lines) or "(the same text)"

        self._diffs.run(compare, self.diff.setPlainText)

    # --- slots --------------------------------------------------------------------------------

    def _on_editor_text_changed(self) -> None:
        self._preview_timer.start()
        self._draft_timer.start()

    def _on_preview_timer_timeout(self) -> None:
        bar = self.preview.verticalScrollBar()
        position = bar.value()
        self.preview.setHtml(to_safe_html(self.editor.toPlainText()))
        bar.setValue(position)  # the reader keeps their place while the text changes

    def _on_draft_timer_timeout(self) -> None:
        if self.dirty():
            self.draft_path.parent.mkdir(parents=True, exist_ok=True)
            self.draft_path.write_text(self.editor.toPlainText(), encoding="utf-8")

    def _on_restore_button_clicked(self) -> None:
        self.editor.setPlainText(self.draft_path.read_text(encoding="utf-8"))
        self.draft_notice.setVisible(False)
        self.restore_button.setVisible(False)

    def save(self, done: Callable[[bool], None] | None = None) -> None:
        """Save the text as a new edited version; ``done(True)`` once saved, ``done(False)`` when it was
        refused (said beside Save; the edits stay)."""
        text = self.editor.toPlainText()
        self.save_state.clear()

        def saved(version: int) -> None:
            self._saved_text = text
            self.draft_path.unlink(missing_ok=True)
            self.draft_notice.setVisible(False)
            self.restore_button.setVisible(False)
            self.saved.emit(version)
            self.reload()
            self.commit.refresh()  # a new text: Commit again
            if done is not None:
                done(True)

        def refused(exc: SanError) -> None:
            self.save_state.setText(f"Not saved: {exc}")
            if done is not None:
                done(False)

        self._context.ops.write(lambda: self._app.save_til_edit(self.local_date, text), saved, refused)

    # --- unsaved edits (``ui.common.unsaved.KeepsEdits``) -------------------------------------

    def unsaved_edits(self) -> str | None:
        return f"the TIL of {self.local_date}" if self.dirty() and not self._discarded else None

    def save_edits(self, done: Callable[[bool], None]) -> None:
        self.save(done)

    def discard_edits(self) -> None:
        self._discarded = True
        self._draft_timer.stop()  # a draft written after this would be offered back next time
        self.draft_path.unlink(missing_ok=True)

    def _on_save_button_clicked(self) -> None:
        self.save()

    def _on_preview_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)

    def _close_if_saved(self, saved: bool) -> None:
        self._saving_to_close = False
        if saved:
            self.close()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.commit.refresh_if_refused()  # back from Settings (a token is not a settings change)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._saving_to_close:
            event.ignore()  # asked already: it closes once saved
            return
        if (unsaved := self.unsaved_edits()) is not None:
            answer = self._ask(self, [unsaved])
            if answer is Unsaved.CANCEL:
                event.ignore()
                return
            if answer is Unsaved.SAVE:
                event.ignore()  # closed once saved; a refused save keeps the window open, saying why
                self._saving_to_close = True
                self.save(self._close_if_saved)
                return
            self.discard_edits()
        if not self.dirty():
            self.draft_path.unlink(missing_ok=True)
        event.accept()
        if not self._closed:
            self._closed = True
            self._preview_timer.stop()
            self._draft_timer.stop()
            self._reads.drop()
            self._diffs.drop()
            self.commit.stop()
            self.closed.emit()
