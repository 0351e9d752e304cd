"""The Commit tab of a TIL's review window: where it goes (GitHub or a local repository, from the settings as
they are now), the path with where the file will really go (the commit job's own decision, looked up in the
repository off the GUI thread while you type), the message, Commit with its result, and the earlier commits,
each naming where it went."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QLineEdit, QListWidget, QPushButton, QWidget

from san_desktop.app import Changes
from san_desktop.core.enums import CommitStatus, CommitTarget, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.placement import Spot
from san_desktop.services.commits import CommitInfo, CommitPreview, CommittedOnceError, where_label
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import tone_style
from san_desktop.ui.common.ops import LatestOnly

PREVIEW_DELAY_MS = 400  # after the last key typed in the path


def placement_text(preview: CommitPreview) -> str:
    """What the path line says about where the file will go."""
    placement, path = preview.placement, preview.plan.path
    if placement is None:
        return preview.unchecked
    if placement.moved:
        return (
            f"{preview.asked} exists — will commit as {path}. SAN Desktop never replaces a file it did not "
            "write: type another path to choose."
        )
    if placement.spot is Spot.REPLACE:
        return f"{path} holds this TIL's earlier version: it will be replaced."
    if placement.spot is Spot.SAME:
        return f"This text is already at {path}: committing records that commit (no second one)."
    return f"{path} is free: the file will be created."


def commit_line(item: CommitInfo) -> str:
    """An earlier commit as the list shows it: version, state, path and where, and its link or sha."""
    result = item.html_url or (item.commit_sha or "")[:12] or item.error_message or ""
    return f"v{item.version} {item.status.value.lower()} → {item.path} on {item.where}  {result}".rstrip()


class CommitTab(QWidget):
    """No signals. ``refresh`` plans again (the text was saved); settings changes are followed by itself."""

    def __init__(self, context: AppContext, local_date: str, dirty: Callable[[], bool]) -> None:
        super().__init__()
        self._context = context
        self._app = context.app
        self.local_date = local_date
        self._dirty = dirty
        self._preview: CommitPreview | None = None
        self._pointed: tuple[CommitTarget, str, str] | None = None  # (target, repository, branch) planned
        self._commits: list[CommitInfo] = []
        self._target_chosen = False  # the user picked a target: settings changes keep it
        self._path_edited = False  # the user typed a path: it is kept, and looked at
        self._default_message = ""  # the message field shows it until the user edits it
        self._requesting = False
        self._previews = LatestOnly(context.ops)
        self._commit_reads = LatestOnly(context.ops)

        self.target = QComboBox()
        self.target.addItem("GitHub", CommitTarget.GITHUB)
        self.target.addItem("Local repository", CommitTarget.LOCAL)
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.path = QLineEdit()
        self.placement = QLabel()
        self.placement.setWordWrap(True)
        self.message = QLineEdit()
        self.commit_button = QPushButton("Commit")
        self.commit_button.setEnabled(False)
        self.commit_state = QLabel()
        self.commit_state.setTextFormat(Qt.TextFormat.RichText)  # escaped: only its link is markup
        self.commit_state.setWordWrap(True)
        self.commits = QListWidget()
        for label in (self.where, self.placement, self.commit_state):  # wrapped text starts at its row's top
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        form = QFormLayout(self)
        form.addRow("Commit to:", self.target)
        form.addRow("", self.where)
        form.addRow("File path:", self.path)
        form.addRow("", self.placement)
        form.addRow("Message:", self.message)
        form.addRow("", self.commit_button)
        form.addRow("", self.commit_state)
        form.addRow("Earlier commits:", self.commits)

        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(PREVIEW_DELAY_MS)
        self._preview_timer.timeout.connect(self.refresh)
        self.target.activated.connect(self._on_target_activated)
        self.path.textEdited.connect(self._on_path_text_edited)
        self.commit_button.clicked.connect(self._on_commit_button_clicked)
        self.commit_state.linkActivated.connect(self._on_commit_state_link_activated)
        context.hub.changed.connect(self._on_hub_changed)
        self._select_target(CommitTarget(self._app.settings.github.target.upper()))
        self.refresh()
        self.load_commits()

    @property
    def chosen_target(self) -> CommitTarget:
        return CommitTarget(self.target.currentData())  # Qt hands the enum back as its text

    def stop(self) -> None:
        """The window closed: no more reading."""
        self._preview_timer.stop()
        self._previews.drop()
        self._commit_reads.drop()
        self._context.hub.changed.disconnect(self._on_hub_changed)

    # --- planning -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Plan again and look where the file would go: for the text as saved, the path and the target."""
        self._preview_timer.stop()
        target = self.chosen_target
        path = self.path.text().strip() if self._path_edited else ""
        self.commit_button.setEnabled(False)
        self.placement.setStyleSheet("")
        self.placement.setText("Looking at the repository…")
        self._previews.run(
            lambda: self._app.commits.preview(self.local_date, target=target, path=path or None),
            self._on_preview_ready,
            self._on_preview_refused,
        )

    def _on_preview_ready(self, preview: CommitPreview) -> None:
        self._preview = preview
        self._pointed = (preview.plan.target, preview.plan.repository, preview.plan.branch)
        self.where.setText(preview.plan.where)
        if not self._path_edited:
            self.path.setText(preview.asked)
        self.placement.setStyleSheet(
            tone_style("warning") if preview.placement is None or preview.placement.moved else ""
        )
        self.placement.setText(placement_text(preview))
        if self.message.text() in ("", self._default_message):
            self.message.setText(preview.plan.message)
        self._default_message = preview.plan.message
        self.commit_button.setEnabled(not self._requesting)
        self._show_state()

    def _on_preview_refused(self, exc: SanError) -> None:
        self._preview = None
        if isinstance(exc, CommittedOnceError):  # still pointed there: that commit's state is shown
            self._pointed = (exc.target, exc.repository, exc.branch)
            self.where.setText(where_label(*self._pointed))
            self.placement.setStyleSheet("")  # not a problem: done (or being done) already
        else:
            self._pointed = None
            self.where.setText("")
            self.placement.setStyleSheet(tone_style("error"))
        self.placement.setText(str(exc))
        self.commit_button.setEnabled(False)
        self._show_state()

    def _select_target(self, target: CommitTarget) -> None:
        self.target.setCurrentIndex(max(0, self.target.findData(target)))

    def refresh_if_refused(self) -> None:
        """Plan again if the last plan was refused (what was in the way may be fixed now)."""
        if self._preview is None and self._pointed is None and not self._previews.pending:
            self.refresh()

    # --- commits ------------------------------------------------------------------------------

    def load_commits(self) -> None:
        self._commit_reads.run(lambda: self._app.commits.list(self.local_date), self._on_commits_loaded)

    def _on_commits_loaded(self, commits: list[CommitInfo]) -> None:
        self._commits = commits
        self.commits.clear()
        for item in reversed(commits):
            self.commits.addItem(commit_line(item))
        self._show_state()

    def _show_state(self) -> None:
        """The state of the newest commit to where the tab now points (none: nothing is said)."""
        pointed = self._pointed
        here = [c for c in self._commits if (c.target, c.repository, c.branch) == pointed]
        if not here:
            self.commit_state.clear()
            return
        item = here[-1]
        named = html.escape(item.where)
        if item.status is CommitStatus.COMPLETED:
            link = item.html_url or ""
            shown = (
                f'<a href="{html.escape(link)}">{html.escape(link)}</a>' if link else html.escape(item.commit_sha or "")
            )
            self.commit_state.setText(f"Committed v{item.version} to {named} at {html.escape(item.path)}: {shown}")
        elif item.status is CommitStatus.FAILED:
            self.commit_state.setText(f"Failed to commit to {named}: {html.escape(item.error_message or '')}")
        else:
            note = f" (last try: {html.escape(item.error_message)})" if item.error_message else ""
            self.commit_state.setText(f"Committing v{item.version} to {named}…{note}")

    # --- slots --------------------------------------------------------------------------------

    def _on_target_activated(self, _index: int) -> None:
        self._target_chosen = True
        self.refresh()

    def _on_path_text_edited(self, _text: str) -> None:
        self._path_edited = bool(self.path.text().strip())  # emptied: back to the default path
        self.commit_button.setEnabled(False)  # until the new path has been looked at
        self._preview_timer.start()

    def _on_commit_button_clicked(self) -> None:
        if self._dirty():
            self.commit_state.setText("Save your edits first: a commit takes the saved text.")
            return
        preview = self._preview
        if preview is None:
            return
        plan = preview.plan
        message = self.message.text().strip()
        self._requesting = True
        self.commit_button.setEnabled(False)
        self.commit_state.setText(f"Waiting for a worker to commit to {html.escape(plan.where)}…")

        def requested(info: CommitInfo) -> None:
            self._requesting = False
            self.path.setText(info.path)  # what was asked for, where the preview said it goes
            self._path_edited = True
            self.load_commits()
            self.refresh()  # now refused, saying why: the same text at the same path is committed once

        def refused(exc: SanError) -> None:
            self._requesting = False
            self.commit_state.setText(html.escape(str(exc)))
            self.refresh()

        self._context.ops.write(
            lambda: self._app.commit_til(self.local_date, target=plan.target, path=plan.path, message=message or None),
            requested,
            refused,
        )

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if changes.settings:
            if not self._target_chosen:
                self._select_target(CommitTarget(self._app.settings.github.target.upper()))
            self.refresh()  # a repository, branch, path template or token set meanwhile
        if any(job.job_type is JobType.TIL_GITHUB_COMMIT for job in changes.jobs):
            self.load_commits()
            if not changes.settings:
                self.refresh()  # "is being committed" becomes "was already committed", or a failed one frees it

    def _on_commit_state_link_activated(self, link: str) -> None:
        url = QUrl(link)
        if url.scheme() in ("http", "https"):
            QDesktopServices.openUrl(url)
