"""Turning clipboard contents and drops into scraps: what Qt holds is read on the GUI thread, then every
path ends in one facade call that runs off it."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import QMimeData, QObject, Signal
from PySide6.QtGui import QClipboard, QGuiApplication

from san_desktop.app import Changed, SanApp
from san_desktop.core.errors import SanError
from san_desktop.core.text import preview
from san_desktop.core.urls import is_web_url
from san_desktop.services.scraps import CaptureResult
from san_desktop.ui.common.ops import Ops
from san_desktop.ui.common.secret_clipboard import SECRET_HINT  # never scrapped by the watcher

log = logging.getLogger(__name__)

# The watcher skips text shorter than this ("ok", a word looked up): a copy is not always meant as a
# scrap. Links and files always count, and Scrap clipboard takes anything.
WATCH_MIN_CHARACTERS = 20


@dataclass(frozen=True)
class CaptureOutcome:
    result: CaptureResult
    label: str  # what the user captured, short


class CaptureController(QObject):
    """Capture from the clipboard (on request, or watched when opted in) and from drops. Each capture
    runs in the background; its outcome arrives by signal.

    Signals:
        captured(object): a ``CaptureOutcome`` for each scrap stored or found already scrapped.
        rejected(str): why something could not be scrapped (nothing was stored).
    """

    captured = Signal(object)
    rejected = Signal(str)

    def __init__(self, app: SanApp, ops: Ops, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._app = app
        self._ops = ops
        self._watching = False
        self._last_seen: str | None = None  # digest of the clipboard text last handled
        self._clipboard: QClipboard = QGuiApplication.clipboard()

    # --- clipboard ----------------------------------------------------------------------------

    def scrap_clipboard(self) -> int:
        """Start capturing what the clipboard holds; returns how many captures were started."""
        mime = self._clipboard_contents()
        started = self.scrap_mime(
            mime, empty_message="The clipboard is empty or holds no text (an image?): nothing was scrapped."
        )
        self._last_seen = self._digest(mime)
        return started

    @property
    def watching(self) -> bool:
        return self._watching

    def set_watching(self, enabled: bool) -> None:
        """Opt-in: scrap whatever is copied, skipping repeats, what is already there now and text shorter
        than ``WATCH_MIN_CHARACTERS``."""
        if enabled == self._watching:
            return
        self._watching = enabled
        if enabled:
            self._last_seen = self._digest(self._clipboard_contents())
            self._clipboard.dataChanged.connect(self._on_clipboard_data_changed)
        else:
            self._clipboard.dataChanged.disconnect(self._on_clipboard_data_changed)

    def _clipboard_contents(self) -> QMimeData:
        # Qt gives no data at all (None) for a clipboard nothing was ever copied to in this session or
        # one that was cleared; that is an empty clipboard.
        return self._clipboard.mimeData() or QMimeData()

    def _on_clipboard_data_changed(self) -> None:
        mime = self._clipboard_contents()
        if not self.can_scrap(mime) or self._too_short(mime) or mime.hasFormat(SECRET_HINT):
            return
        digest = self._digest(mime)
        if digest == self._last_seen:
            return  # the same content again (or the app's own write of it)
        self._last_seen = digest
        self.scrap_mime(mime, empty_message=None)

    @staticmethod
    def _too_short(mime: QMimeData) -> bool:
        if mime.hasUrls() and mime.urls():
            return False
        text = mime.text().strip()
        return len(text) < WATCH_MIN_CHARACTERS and not is_web_url(text)

    @staticmethod
    def _digest(mime: QMimeData) -> str:
        text = mime.text() + "\x00" + (mime.html() if mime.hasHtml() else "")
        return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()

    # --- any MIME data (clipboard or drop) ----------------------------------------------------

    def can_scrap(self, mime: QMimeData) -> bool:
        return mime.hasUrls() or mime.hasHtml() or mime.hasText()

    def scrap_mime(
        self, mime: QMimeData, *, empty_message: str | None = "Nothing to scrap in what was dropped."
    ) -> int:
        """Read ``mime`` now (on the GUI thread) and capture it in the background; returns how many
        captures were started."""
        app = self._app
        calls: list[tuple[str, Callable[[], Changed[CaptureResult]]]] = []
        if mime.hasUrls() and mime.urls():
            for url in mime.urls():
                if url.isLocalFile():
                    path = Path(url.toLocalFile())
                    calls.append((path.name, partial(app.capture_file, path)))
                else:
                    address = url.toString()
                    title = mime.text().strip() if mime.hasText() and mime.text().strip() != address else None
                    calls.append((address, partial(app.capture_url, address, title)))
        elif mime.hasHtml() and mime.html().strip():
            markup = mime.html()
            calls.append((preview(mime.text() or markup, 60), partial(app.capture_html, markup)))
        elif mime.hasText():
            text = mime.text()
            if is_web_url(text):
                calls.append((text.strip(), partial(app.capture_url, text.strip())))
            else:
                calls.append((preview(text, 60), partial(app.capture_text, text)))
        elif empty_message:
            self.rejected.emit(empty_message)
        for label, call in calls:
            self._start(label, call)
        return len(calls)

    def _start(self, label: str, call: Callable[[], Changed[CaptureResult]]) -> None:
        def captured(result: CaptureResult) -> None:
            self.captured.emit(CaptureOutcome(result, label))

        def rejected(exc: SanError) -> None:
            log.info("Capture of %s rejected: %s", label, exc)
            self.rejected.emit(str(exc))

        self._ops.write(call, captured, rejected, initiator=self)
