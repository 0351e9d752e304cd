from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings
from san_desktop.core.errors import SanError
from san_desktop.core.redact import error_message
from san_desktop.core.settings import AISettings, Settings
from san_desktop.services.secrets import AI_API_KEY, get_secret, set_secret
from san_desktop.ui.context import AppContext

log = logging.getLogger(__name__)


class _TestSignals(QObject):
    """Signals: finished(bool, str): whether the server answered, and what was learnt."""

    finished = Signal(bool, str)


class _ConnectionTest(QRunnable):
    """Calls the server on a pool thread: the dialog stays responsive however slow the server is."""

    def __init__(self, settings: OpenAISettings) -> None:
        super().__init__()
        self.settings = settings
        self.signals = _TestSignals()

    def run(self) -> None:
        provider = OpenAICompatibleProvider(self.settings)
        try:
            self.signals.finished.emit(True, provider.test_connection())
        except Exception as exc:
            self.signals.finished.emit(False, error_message(exc))
        finally:
            provider.close()


class SettingsDialog(QDialog):
    """AI provider settings: embedded (offline) or an OpenAI-compatible server, with "Test connection".
    The API key goes to the system keyring. No signals of its own."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._context = context
        self._tests = QThreadPool(self)
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
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(
            "stored in the keyring" if get_secret(AI_API_KEY) else "none (Ollama needs none)"
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
        form.addRow("Largest scrap:", self.max_kb)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.test_button)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

        self.provider.currentIndexChanged.connect(lambda _i: self._update_enabled())
        self.test_button.clicked.connect(self._on_test_button_clicked)
        self._update_enabled()

    def _remote(self) -> bool:
        return bool(self.provider.currentData() == "openai")

    def _update_enabled(self) -> None:
        for widget in (
            self.base_url,
            self.chat_model,
            self.embedding_model,
            self.timeout,
            self.api_key,
            self.test_button,
        ):
            widget.setEnabled(self._remote())

    def ai_settings(self) -> AISettings:
        return AISettings(
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip(),
            chat_model=self.chat_model.text().strip(),
            embedding_model=self.embedding_model.text().strip(),
            timeout_seconds=self.timeout.value(),
            temperature=self._context.settings.ai.temperature,
        )

    def _on_test_button_clicked(self) -> None:
        try:
            ai = self.ai_settings()
        except ValueError as exc:
            self.status.setText(str(exc))
            return
        key = self.api_key.text().strip() or get_secret(AI_API_KEY)
        test = _ConnectionTest(OpenAISettings(ai.base_url, ai.chat_model, ai.embedding_model, key, ai.timeout_seconds))
        test.signals.finished.connect(self._on_test_finished)
        self.test_button.setEnabled(False)
        self.status.setText(f"Asking {ai.base_url}…")
        self._tests.start(test)

    def _on_test_finished(self, ok: bool, message: str) -> None:
        self.test_button.setEnabled(self._remote())
        self.status.setText(("Connected. " if ok else "Failed: ") + message)

    def _on_save(self) -> None:
        try:
            ai = self.ai_settings()
            if self.api_key.text().strip():
                set_secret(AI_API_KEY, self.api_key.text().strip())
        except (ValueError, SanError) as exc:
            self.status.setText(str(exc))
            return
        settings: Settings = replace(
            self._context.settings,
            ai=ai,
            capture=replace(self._context.settings.capture, max_bytes=self.max_kb.value() * 1000),
        )
        self._context.apply_settings(settings)
        self.accept()

    def done(self, result: int) -> None:
        self._tests.waitForDone(100)
        super().done(result)
