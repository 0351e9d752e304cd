"""Settings → Browser: whether the browser extension's endpoint listens, and the token to paste into the
extension (hidden until shown, copied in one click, regenerated after a confirmation). The token is read and
made off the GUI thread (the keyring may take its time)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.secret_clipboard import copy_secret
from san_desktop.ui.window.browser_endpoint import BrowserEndpoint

Confirm = Callable[[str], bool]


class BrowserSection(QWidget):
    """No signals: ``enabled`` is read by the dialog when it saves."""

    def __init__(self, context: AppContext, browser: BrowserEndpoint, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._browser = browser
        self.confirm: Confirm = self._ask
        self.enabled = QCheckBox("Take pages from the SAN Desktop browser extension (127.0.0.1 only, with this token)")
        self.enabled.setChecked(context.settings.capture.browser_endpoint)
        self.token = QLineEdit()
        self.token.setReadOnly(True)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("reading…")
        self.show_button = QPushButton("Show")
        self.show_button.setCheckable(True)
        self.show_button.toggled.connect(self._on_show_button_toggled)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.regenerate_button = QPushButton("Regenerate…")
        self.regenerate_button.clicked.connect(self._on_regenerate_button_clicked)
        self.status = QLabel(self._listening())
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Token:"))
        row.addWidget(self.token, 1)
        for button in (self.show_button, self.copy_button, self.regenerate_button):
            row.addWidget(button)
            button.setEnabled(False)  # until the token is read
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.enabled)
        layout.addLayout(row)
        layout.addWidget(self.status)
        context.ops.run(browser.token, self._show_token, lambda exc: self.status.setText(str(exc)))

    def _listening(self) -> str:
        if self._browser.port is not None:
            return f"Listening on 127.0.0.1:{self._browser.port}. Paste the token into the extension's options."
        return self._browser.problem or "Not listening (turned off)."

    def _show_token(self, token: str) -> None:
        self.token.setText(token)
        for button in (self.show_button, self.copy_button, self.regenerate_button):
            button.setEnabled(True)

    def _on_show_button_toggled(self, shown: bool) -> None:
        self.token.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self.show_button.setText("Hide" if shown else "Show")

    def _on_copy_button_clicked(self) -> None:
        copy_secret(self.token.text())
        self.status.setText("Token copied: paste it into the extension's options.")

    def _on_regenerate_button_clicked(self) -> None:
        if not self.confirm("Make a new token? Extensions given the old one stop working until they get the new one."):
            return
        self.regenerate_button.setEnabled(False)

        def made(token: str) -> None:
            self._show_token(token)
            self.status.setText("A new token: paste it into the extension's options.")

        self._context.ops.run(self._browser.regenerate_token, made, lambda exc: self.status.setText(str(exc)))

    def _ask(self, question: str) -> bool:
        answer = QMessageBox.question(
            self, "Regenerate the token", question, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel
        )
        return answer == QMessageBox.StandardButton.Yes
