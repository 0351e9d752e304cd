"""The review-and-commit window of a day's TIL: a markdown editor beside a live preview, the version
history with a diff between any two, Save (a new edited version), and Commit to GitHub or a local
repository with its progress, result and earlier commits. Unsaved edits are never lost: closing asks, and
a draft kept on disk while typing is offered back the next time the window opens."""

from __future__ import annotations

import difflib
import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.enums import CommitStatus, CommitTarget, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.markdown_html import to_safe_html
from san_desktop.services.commits import CommitInfo, CommitPlan
from san_desktop.services.til import TilView
from san_desktop.ui.common.context import AppContext

PREVIEW_DELAY_MS = 400
DRAFT_DELAY_MS = 1000
DRAFTS = "drafts"


class TilReviewWindow(QWidget):
    """Signals:
    saved(int): a new edited version was saved.
    """

    saved = Signal(int)

    def __init__(self, context: AppContext, local_date: str, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle(f"TIL {local_date} — review and commit")
        self.resize(1200, 800)
        self._context = context
        self._app = context.app
        self.local_date = local_date
        self._view: TilView | None = None
        self._saved_text = ""
        self.ask_to_discard = self._ask_to_discard  # tests answer it themselves

        self.editor = QPlainTextEdit()
        self.preview = QTextBrowser()
        self.preview.setOpenLinks(False)
        self.draft_notice = QLabel()
        self.draft_notice.setVisible(False)
        self.restore_button = QPushButton("Restore unsaved draft")
        self.restore_button.setVisible(False)
        self.save_button = QPushButton("Save")
        self.save_button.setShortcut("Ctrl+S")
        self.versions = QListWidget()
        self.diff_left = QComboBox()
        self.diff_right = QComboBox()
        self.diff = QTextBrowser()
        self.target = QComboBox()
        self.target.addItem("GitHub", CommitTarget.GITHUB)
        self.target.addItem("Local repository", CommitTarget.LOCAL)
        self.where = QLabel()
        self.path = QLineEdit()
        self.message = QLineEdit()
        self.commit_button = QPushButton("Commit")
        self.commit_state = QLabel()
        self.commit_state.setOpenExternalLinks(False)
        self.commit_state.setWordWrap(True)
        self.commits = QListWidget()

        editor_side = QWidget()
        editor_layout = QVBoxLayout(editor_side)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        draft_row = QHBoxLayout()
        draft_row.addWidget(self.draft_notice, 1)
        draft_row.addWidget(self.restore_button)
        editor_layout.addLayout(draft_row)
        editor_layout.addWidget(self.editor, 1)
        editor_layout.addWidget(self.save_button)
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

        commit = QWidget()
        form = QFormLayout(commit)
        form.addRow("Commit to:", self.target)
        form.addRow("", self.where)
        form.addRow("File path:", self.path)
        form.addRow("Message:", self.message)
        form.addRow("", self.commit_button)
        form.addRow("", self.commit_state)
        form.addRow("Earlier commits:", self.commits)

        self.tabs = QTabWidget()
        self.tabs.addTab(editing, "Edit")
        self.tabs.addTab(history, "Versions")
        self.tabs.addTab(commit, "Commit")
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
        self.target.activated.connect(lambda _i: self._plan())
        self.commit_button.clicked.connect(self._on_commit_button_clicked)
        self.commit_state.linkActivated.connect(self._on_link_activated)
        self.preview.anchorClicked.connect(lambda url: self._on_link_activated(url.toString()))
        context.hub.changed.connect(self._on_hub_changed)
        self.reload()

    # --- loading ------------------------------------------------------------------------------

    @property
    def draft_path(self) -> Path:
        return self._app.data_dir / DRAFTS / f"{self.local_date}.md"

    def dirty(self) -> bool:
        return self.editor.toPlainText() != self._saved_text

    def reload(self) -> None:
        self._context.ops.run(lambda: self._app.til.get(self.local_date), self._loaded)
        self._load_commits()

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
            self._plan()
        self._show_diff()

    def _offer_draft(self) -> None:
        draft = self.draft_path
        if draft.exists() and draft.read_text(encoding="utf-8") != self._saved_text:
            self.draft_notice.setText("An unsaved draft from your last session is kept.")
            self.draft_notice.setVisible(True)
            self.restore_button.setVisible(True)

    def _plan(self) -> None:
        target = CommitTarget(self.target.currentData())  # Qt hands the enum back as its text

        def planned(plan: CommitPlan) -> None:
            self.where.setText(f"{plan.repository} ({plan.branch})")
            self.path.setText(plan.path)
            self.message.setText(plan.message)
            self.commit_button.setEnabled(True)

        def blocked(exc: SanError) -> None:
            self.where.setText(str(exc))
            self.commit_button.setEnabled(False)

        self._context.ops.run(lambda: self._app.commits.plan(self.local_date, target=target), planned, blocked)

    def _load_commits(self) -> None:
        self._context.ops.run(lambda: self._app.commits.list(self.local_date), self._show_commits)

    def _show_commits(self, commits: list[CommitInfo]) -> None:
        self.commits.clear()
        for item in reversed(commits):
            result = item.html_url or item.commit_sha or item.error_message or ""
            self.commits.addItem(f"v{item.version} {item.status.value.lower()} → {item.path}  {result}")
        if commits:
            self._show_result(commits[-1])

    def _show_result(self, item: CommitInfo) -> None:
        if item.status is CommitStatus.COMPLETED:
            link = item.html_url or ""
            shown = (
                f'<a href="{html.escape(link)}">{html.escape(link)}</a>' if link else html.escape(item.commit_sha or "")
            )
            self.commit_state.setText(f"Committed: {shown}")
        elif item.status is CommitStatus.FAILED:
            self.commit_state.setText(f"Failed: {html.escape(item.error_message or '')}")
        else:
            note = f" (last try: {html.escape(item.error_message)})" if item.error_message else ""
            self.commit_state.setText(f"Committing…{note}")

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

        self._context.ops.run(compare, lambda text: self.diff.setPlainText(text))

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

    def save(self) -> None:
        text = self.editor.toPlainText()

        def saved(version: int) -> None:
            self._saved_text = text
            self.draft_path.unlink(missing_ok=True)
            self.draft_notice.setVisible(False)
            self.restore_button.setVisible(False)
            self.saved.emit(version)
            self.reload()
            self._plan()

        self._context.ops.write(
            lambda: self._app.save_til_edit(self.local_date, text), saved, lambda exc: self.where.setText(str(exc))
        )

    def _on_save_button_clicked(self) -> None:
        self.save()

    def _on_commit_button_clicked(self) -> None:
        if self.dirty():
            self.commit_state.setText("Save your edits first: a commit takes the saved text.")
            return
        target = CommitTarget(self.target.currentData())
        path, message = self.path.text().strip(), self.message.text().strip()
        self.commit_button.setEnabled(False)
        self.commit_state.setText("Waiting for the GitHub worker…")

        def requested(_info: CommitInfo) -> None:
            self._load_commits()

        def refused(exc: SanError) -> None:
            self.commit_state.setText(str(exc))
            self.commit_button.setEnabled(True)

        self._context.ops.write(
            lambda: self._app.commit_til(self.local_date, target=target, path=path or None, message=message or None),
            requested,
            refused,
        )

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if any(job.job_type is JobType.TIL_GITHUB_COMMIT for job in changes.jobs):
            self._load_commits()

    def _on_link_activated(self, link: str) -> None:
        url = QUrl(link)
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)

    def _ask_to_discard(self) -> bool:
        answer = QMessageBox.question(
            self,
            "Unsaved edits",
            "Your edits of this TIL are not saved. Save them as a new version?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            self.save()
            return True
        if answer == QMessageBox.StandardButton.Discard:
            self.draft_path.unlink(missing_ok=True)
            return True
        return False

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.dirty() and not self.ask_to_discard():
            event.ignore()
            return
        if not self.dirty():
            self.draft_path.unlink(missing_ok=True)
        event.accept()
