"""The browser extension's way in while the window runs (``web.endpoint``): started with the window unless
``capture.browser_endpoint`` is off, its port written to the data folder, stopped when the window closes.
Requests are answered on the endpoint's own threads; what they store reaches the pages through the change
hub, a tick at a time (a burst of two hundred pages is a few announcements, not two hundred)."""

from __future__ import annotations

import json
import logging
import os
import threading

from PySide6.QtCore import QObject, Signal

from san_desktop.app import Changes
from san_desktop.core.errors import SanError
from san_desktop.ui.common.context import AppContext
from san_desktop.web.endpoint import BrowserCapture, CaptureEndpoint

log = logging.getLogger(__name__)

PORT_FILE = "capture-endpoint.json"  # in the data folder while the endpoint listens: {"port", "pid"}


class BrowserEndpoint(QObject):
    """Signals:
    stored(object): the ``Changes`` of a capture (emitted on the endpoint's threads, received on the GUI's).
    """

    stored = Signal(object)

    def __init__(self, context: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._token: str | None = None
        self._token_lock = threading.Lock()
        self.endpoint = CaptureEndpoint(
            self._capture,
            self.token,
            max_body=self._max_body(),
            max_text=context.settings.capture.max_bytes,
        )
        self.stored.connect(self._on_stored)
        self.problem: str | None = None  # why it is not listening, when it should be
        context.hub.changed.connect(self._on_hub_changed)

    @property
    def port(self) -> int | None:
        return self.endpoint.port

    def start(self) -> None:
        if not self._context.settings.capture.browser_endpoint or self.port is not None:
            return
        try:
            port = self.endpoint.start()
        except SanError as exc:
            self.problem = str(exc)
            log.warning("%s", exc)
            return
        self.problem = None
        (self._app.data_dir / PORT_FILE).write_text(json.dumps({"port": port, "pid": os.getpid()}), encoding="utf-8")
        log.info("Browser capture endpoint on 127.0.0.1:%d", port)

    def stop(self) -> None:
        if self.port is None:
            return
        self.endpoint.stop()
        (self._app.data_dir / PORT_FILE).unlink(missing_ok=True)

    def token(self) -> str:
        """The token (read from the keyring or its file once, on the endpoint's thread: not the GUI's)."""
        from san_desktop.services.capture_token import capture_token

        with self._token_lock:
            if self._token is None:
                self._token = capture_token(self._app.data_dir)
            return self._token

    def regenerate_token(self) -> str:
        """A new token (off the GUI thread: it writes to the keyring); extensions given the old one are
        refused from now on."""
        from san_desktop.services.capture_token import regenerate_capture_token

        with self._token_lock:
            self._token = regenerate_capture_token(self._app.data_dir)
            return self._token

    def _max_body(self) -> int:
        # the sent DOM is markup around the text: ten times what a capture keeps, at least 10 MB
        return max(10_000_000, 10 * self._context.settings.capture.max_bytes)

    def _capture(self, sent: BrowserCapture) -> tuple[str, bool]:
        changed = self._app.capture_from_browser(sent)
        self.stored.emit(changed.changes)
        return changed.value.scrap_id, changed.value.duplicate

    def _on_stored(self, changes: Changes) -> None:
        self._context.hub.tell(changes, background=True)

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if changes.settings:  # turned on or off in Settings (or by `san config set`)
            if self._context.settings.capture.browser_endpoint:
                self.start()
            else:
                self.stop()
