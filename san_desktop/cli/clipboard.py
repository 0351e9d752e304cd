"""The system clipboard for `san scrap add --clipboard`, so that a desktop's own keyboard shortcut settings can
bind a global key to scrapping what was copied. Read with Qt (its X11, Wayland, macOS and Windows
clipboards), which is loaded only for this."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from san_desktop.core.errors import SanError


@dataclass(frozen=True)
class Clipboard:
    text: str
    html: str | None
    files: tuple[str, ...]  # copied files, as local paths
    links: tuple[str, ...]  # other addresses it holds as such

    @property
    def empty(self) -> bool:
        return not (self.text.strip() or self.html or self.files or self.links)


def read_clipboard() -> Clipboard:
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")
    ):
        raise SanError(
            "No display to read the clipboard from (neither DISPLAY nor WAYLAND_DISPLAY is set): run it in your "
            "desktop session, or use --text, --file or - (standard input)."
        )
    from PySide6.QtGui import QGuiApplication

    application = QGuiApplication.instance() or QGuiApplication(["san"])
    mime = application.clipboard().mimeData()  # type: ignore[attr-defined]
    if mime is None:  # (nothing was ever copied in this session, or it was cleared)
        return Clipboard("", None, (), ())
    urls = mime.urls() if mime.hasUrls() else []
    return Clipboard(
        text=mime.text(),
        html=mime.html() if mime.hasHtml() else None,
        files=tuple(url.toLocalFile() for url in urls if url.isLocalFile()),
        links=tuple(url.toString() for url in urls if not url.isLocalFile()),
    )
