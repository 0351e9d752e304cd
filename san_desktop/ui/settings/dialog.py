from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changed, Changes
from san_desktop.core.credentials import AI_API_KEY, GITHUB_TOKEN
from san_desktop.core.errors import SanError
from san_desktop.core.redact import error_message, readable
from san_desktop.core.settings import AISettings, GitHubSettings, NotificationSettings, QuizSettings, Settings
from san_desktop.services.settings_sync import SettingsConflictError
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.look import fit_height_on_screen
from san_desktop.ui.settings.browser_section import BrowserSection
from san_desktop.ui.settings.secret_field import SecretField, read_source
from san_desktop.ui.window.browser_endpoint import BrowserEndpoint

log = logging.getLogger(__name__)

NOTIFICATION_LABELS = {
    "cards_ready": "cards are ready",
    "til_ready": "a TIL is ready",
    "commit_done": "a TIL is committed",
    "failures": "jobs fail",
    "do_not_disturb": "Do not disturb",
}


class SettingsDialog(QDialog):
    """AI provider settings: embedded (offline) or an OpenAI-compatible server, with "Test connection".
    The API key and the GitHub token go to the system keyring; where there is none (or it refuses), the
    other settings are saved all the same and the note beside the field names the environment variable
    that works instead. Keyring, file and network work runs off the GUI thread. If another program changes
    the settings while the dialog is open, it says so before overwriting them. No signals of its own."""

    def __init__(
        self, context: AppContext, parent: QWidget | None = None, browser: BrowserEndpoint | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._context = context
        self._app = context.app
        self._overwrite = False  # set once the user was told the file changed elsewhere
        self._testing = False
        ai = context.settings.ai

        self.provider = QComboBox()
        self.provider.addItem("Embedded (offline, no setup)", "local")
        self.provider.addItem("OpenAI-compatible server (OpenAI, Ollama, LM Studio…)", "openai")
        self.provider.setCurrentIndex(0 if ai.provider == "local" else 1)
        self.base_url = QLineEdit(ai.base_url)
        self.chat_model = QLineEdit(ai.chat_model)
        self.embedding_model = QLineEdit(ai.embedding_model)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(5, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(ai.timeout_seconds)
        self.api_key_field = SecretField("none (Ollama needs none)", self._fit_height)
        self.api_key = self.api_key_field.edit
        context.ops.run(
            lambda: read_source(self._app.connections.ai_key_source, AI_API_KEY), self.api_key_field.show_source
        )
        self.max_kb = QSpinBox()
        self.max_kb.setRange(1, 100_000)
        self.max_kb.setSuffix(" KB")
        self.max_kb.setValue(max(1, context.settings.capture.max_bytes // 1000))
        self.test_button = QPushButton("Test connection")
        self.status = QLabel()
        self.status.setWordWrap(True)

        form = QFormLayout()
        form.addRow("AI provider:", self.provider)
        form.addRow("Server URL:", self.base_url)
        form.addRow("Chat model:", self.chat_model)
        form.addRow("Embedding model:", self.embedding_model)
        form.addRow("Timeout:", self.timeout)
        form.addRow("API key:", self.api_key)
        form.addRow("", self.api_key_field.note)
        form.addRow("Largest scrap:", self.max_kb)
        github = context.settings.github
        self.commit_target = QComboBox()
        self.commit_target.addItem("GitHub", "github")
        self.commit_target.addItem("A local git repository", "local")
        self.commit_target.setCurrentIndex(0 if github.target == "github" else 1)
        self.github_url = QLineEdit(github.api_url)
        self.github_url.setToolTip("https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise")
        self.repository = QLineEdit(github.repository)
        self.repository.setPlaceholderText("owner/name")
        self.branch = QLineEdit(github.branch)
        self.path_template = QLineEdit(github.path_template)
        self.local_repository = QLineEdit(github.local_repository)
        self.local_branch = QLineEdit(github.local_branch)
        self.github_token_field = SecretField("fine-grained token with Contents read/write", self._fit_height)
        self.github_token = self.github_token_field.edit
        context.ops.run(
            lambda: read_source(self._app.connections.github_token_source, GITHUB_TOKEN),
            self.github_token_field.show_source,
        )
        self.github_test_button = QPushButton("Test GitHub")
        self.github_status = QLabel()
        self.github_status.setWordWrap(True)
        github_form = QFormLayout()
        github_form.addRow("Commit TILs to:", self.commit_target)
        github_form.addRow("GitHub API:", self.github_url)
        github_form.addRow("Repository:", self.repository)
        github_form.addRow("Branch:", self.branch)
        github_form.addRow("File path:", self.path_template)
        github_form.addRow("GitHub token:", self.github_token)
        github_form.addRow("", self.github_token_field.note)
        github_form.addRow("Local repository:", self.local_repository)
        github_form.addRow("Local branch:", self.local_branch)

        notifications = context.settings.notifications
        self.notify_boxes: dict[str, QCheckBox] = {}
        notify_row = QHBoxLayout()
        for key, label in NOTIFICATION_LABELS.items():
            box = QCheckBox(label)
            box.setChecked(bool(getattr(notifications, key)))
            self.notify_boxes[key] = box
            notify_row.addWidget(box)
        notify_row.addStretch(1)
        self.notify_boxes["do_not_disturb"].setToolTip("No notification at all until this is turned off")

        quiz = context.settings.quiz
        self.retention = QDoubleSpinBox()
        self.retention.setRange(0.70, 0.99)
        self.retention.setSingleStep(0.01)
        self.retention.setDecimals(2)
        self.retention.setValue(quiz.desired_retention)
        self.retention.setToolTip(
            "The share of quizzes you should still know when they come back: higher means more reviews"
        )
        self.quiz_after_til = QCheckBox("Make quizzes when a TIL is finished")
        self.quiz_after_til.setChecked(quiz.generate_after_til)
        self.reminder_time = QLineEdit(quiz.reminder_time)
        self.reminder_time.setPlaceholderText("HH:MM, or empty for no reminder")
        self.reminder_time.setToolTip('A daily "quizzes due" notification at this local time')
        self.quiz_status = QLabel()
        self.quiz_status.setWordWrap(True)
        quiz_form = QFormLayout()
        quiz_form.addRow("Desired retention:", self.retention)
        quiz_form.addRow("", self.quiz_after_til)
        quiz_form.addRow("Daily reminder at:", self.reminder_time)
        quiz_form.addRow("", self.quiz_status)

        self.save_status = QLabel()  # about saving as a whole: a file changed elsewhere, a full disk
        self.save_status.setWordWrap(True)
        self.save_status.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        # the sections scroll; what is said about saving, Save and Cancel stay below them, always on screen
        self.sections = QWidget()
        sections = QVBoxLayout(self.sections)
        sections.setContentsMargins(0, 0, 0, 0)
        sections.addLayout(form)
        sections.addWidget(self.test_button)
        sections.addWidget(self.status)
        sections.addWidget(QLabel("<b>TIL commits</b>"))
        sections.addLayout(github_form)
        sections.addWidget(self.github_test_button)
        sections.addWidget(self.github_status)
        sections.addWidget(QLabel("<b>Notify me when</b>"))
        sections.addLayout(notify_row)
        sections.addSpacing(8)
        sections.addWidget(QLabel("<b>Quizzes</b>"))
        sections.addLayout(quiz_form)
        self.browser = BrowserSection(context, browser, self) if browser is not None else None
        if self.browser is not None:
            sections.addWidget(QLabel("<b>Browser</b>"))
            sections.addWidget(self.browser)
        sections.addStretch(1)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroller.setWidget(self.sections)
        # as wide as the sections need beside a scroll bar: they scroll down, never sideways
        bar = self.scroller.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        self.scroller.setMinimumWidth(self.sections.minimumSizeHint().width() + bar)
        layout = QVBoxLayout(self)
        layout.addWidget(self.scroller, 1)
        layout.addWidget(self.save_status)
        layout.addWidget(buttons)
        self.github_test_button.clicked.connect(self._on_github_test_button_clicked)
        self.commit_target.currentIndexChanged.connect(lambda _i: self._update_target())
        self._update_target()

        self.provider.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.test_button.clicked.connect(self._on_test_button_clicked)
        context.hub.changed.connect(self._on_hub_changed)
        self._update_enabled()

    def focus_section(self, section: str) -> None:
        """Put the cursor in a section's first field ("ai": the provider, "github": the repository)."""
        field = {"ai": self.provider, "github": self.repository}.get(section)
        if field is not None:
            field.setFocus()

    def _local_target(self) -> bool:
        return bool(self.commit_target.currentData() == "local")

    def _update_target(self) -> None:
        self.github_test_button.setText("Test repository" if self._local_target() else "Test GitHub")
        self.github_test_button.setToolTip(
            "Check that the local repository takes commits"
            if self._local_target()
            else "Check the token and the push permission on the repository"
        )

    def _remote(self) -> bool:
        return bool(self.provider.currentData() == "openai")

    def _update_enabled(self) -> None:
        for widget in (
            self.base_url,
            self.chat_model,
            self.embedding_model,
            self.timeout,
            self.test_button,
        ):
            widget.setEnabled(self._remote())
        self.api_key_field.set_enabled(self._remote())
        self._fit_height()

    def ai_settings(self) -> AISettings:
        """The AI settings this dialog shows, with the others (set in the file) as they were."""
        return replace(
            self._context.settings.ai,
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip(),
            chat_model=self.chat_model.text().strip(),
            embedding_model=self.embedding_model.text().strip(),
            timeout_seconds=self.timeout.value(),
        )

    def _on_test_button_clicked(self) -> None:
        try:
            ai = self.ai_settings()
        except ValueError as exc:
            self._tell(self.status, str(exc))
            return
        key = self.api_key.text().strip() or None
        self.test_button.setEnabled(False)
        self._testing = True
        self._tell(self.status, f"Asking {ai.base_url}…")
        self._context.ops.run(
            lambda: self._app.connections.test_ai(ai, key),
            lambda message: self._on_test_finished(True, message),
            lambda exc: self._on_test_finished(False, readable(error_message(exc))),
            on_bug=lambda exc: self._on_test_finished(False, readable(error_message(exc))),
        )

    def _on_test_finished(self, ok: bool, message: str) -> None:
        self._testing = False
        self.test_button.setEnabled(self._remote())
        self._tell(self.status, ("Connected. " if ok else "Failed: ") + message)

    def github_settings(self) -> GitHubSettings:
        return replace(
            self._context.settings.github,
            target=str(self.commit_target.currentData()),
            api_url=self.github_url.text().strip(),
            repository=self.repository.text().strip(),
            branch=self.branch.text().strip() or "main",
            path_template=self.path_template.text().strip() or GitHubSettings().path_template,
            local_repository=self.local_repository.text().strip(),
            local_branch=self.local_branch.text().strip() or "til",
        )

    def notification_settings(self) -> NotificationSettings:
        return NotificationSettings(**{key: box.isChecked() for key, box in self.notify_boxes.items()})

    def quiz_settings(self) -> QuizSettings:
        """Raises ValueError saying what is wrong (a reminder time that is not HH:MM)."""
        return QuizSettings(
            desired_retention=round(self.retention.value(), 2),
            generate_after_til=self.quiz_after_til.isChecked(),
            reminder_time=self.reminder_time.text().strip(),
        )

    def _on_github_test_button_clicked(self) -> None:
        try:
            github = self.github_settings()
        except ValueError as exc:
            self._tell(self.github_status, str(exc))
            return
        token = self.github_token.text().strip() or None
        self.github_test_button.setEnabled(False)
        local = self._local_target()
        self._tell(
            self.github_status, f"Looking at {github.local_repository}…" if local else f"Asking {github.api_url}…"
        )

        def done(text: str) -> None:
            self.github_test_button.setEnabled(True)
            self._tell(self.github_status, text)

        def test() -> str:
            if local:  # in this dialog's words: the field, not the settings key
                return self._app.connections.test_local_repository(github, "the Local repository field")
            return self._app.connections.test_github(github, token)

        self._context.ops.run(
            test,
            lambda message: done(f"OK: {message}"),
            lambda exc: done(f"Failed: {exc}"),
            on_bug=lambda exc: done(f"Failed: {readable(error_message(exc))}"),
        )

    def _say_about_saving(self, text: str) -> None:
        self.save_status.setText(text)
        self.save_status.setVisible(bool(text))
        self._fit_height()

    def _tell(self, label: QLabel, text: str) -> None:
        """A section's status line, and room for it."""
        label.setText(text)
        self._fit_height()

    def showEvent(self, event: QShowEvent) -> None:
        # sized before QDialog places it (in its own showEvent): as tall as the sections, if the screen has room
        if not event.spontaneous():
            self._fit_height(shown=True)
        super().showEvent(event)

    def _fit_height(self, *, shown: bool = False) -> None:
        """Grow to show the sections whole, a note that appeared too (word-wrapped labels do not grow a shown
        window), as far as the screen has room; beyond it, the sections scroll."""
        layout = self.layout()
        if layout is None or not (shown or self.isVisible()):
            return
        layout.activate()
        width = self.scroller.viewport().width()
        content = self.sections.heightForWidth(width) if self.sections.hasHeightForWidth() else -1
        content = max(content, self.sections.minimumSizeHint().height())
        needed = self.height() - self.scroller.viewport().height() + content
        if needed > self.height():
            fit_height_on_screen(self, needed)

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if changes.settings and changes.external:
            self._say_about_saving(
                "The settings were just changed by another program. Saving now overwrites that change; "
                "Cancel and reopen Settings to see it."
            )
            self._overwrite = True

    def _on_save(self) -> None:
        try:
            ai = self.ai_settings()
        except ValueError as exc:
            self._tell(self.status, str(exc))
            return
        try:
            github = self.github_settings()
        except ValueError as exc:
            self._tell(self.github_status, str(exc))
            return
        try:
            quiz = self.quiz_settings()
        except ValueError as exc:
            self._tell(self.quiz_status, str(exc))
            return
        key = self.api_key_field.text()
        token = self.github_token_field.text()
        settings: Settings = replace(
            self._context.settings,
            ai=ai,
            github=github,
            capture=replace(
                self._context.settings.capture,
                max_bytes=self.max_kb.value() * 1000,
                browser_endpoint=self.browser.enabled.isChecked()
                if self.browser is not None
                else self._context.settings.capture.browser_endpoint,
            ),
            notifications=self.notification_settings(),
            quiz=quiz,
        )
        overwrite = self._overwrite

        def save() -> Changed[dict[str, str]]:
            """The settings first, then each secret on its own: a keyring that refuses one loses nothing
            else. The value: what was refused, by field ("ai", "github"), a sentence each."""
            changes = self._app.save_settings(settings, overwrite=overwrite)
            refused: dict[str, str] = {}
            if key:
                try:
                    self._app.connections.set_ai_key(key)
                except SanError as exc:
                    refused["ai"] = str(exc)
                else:  # a new key is new AI settings: AI jobs paused by a rejected key run again at once
                    changes = changes | Changes(settings=True, ai_settings_changed=True)
            if token:
                try:
                    self._app.connections.set_github_token(token)
                except SanError as exc:
                    refused["github"] = str(exc)
            return Changed(refused, changes)

        def saved(refused: dict[str, str]) -> None:
            self._overwrite = False  # this dialog's settings are the file's now
            for field, name in ((self.api_key_field, "ai"), (self.github_token_field, "github")):
                if name in refused:
                    field.show_refused(refused[name])
                else:
                    field.clear_refused()
            if not refused:
                self.accept()
                return
            self._say_about_saving("The other settings were saved; the secret beside its field was not.")

        def failed(exc: SanError) -> None:
            self._say_about_saving(str(exc))
            if isinstance(exc, SettingsConflictError):
                self._overwrite = True  # said once; the next Save overwrites

        self._context.ops.write(save, saved, failed, initiator=self)
