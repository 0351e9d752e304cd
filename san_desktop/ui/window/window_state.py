"""The window as it was left: geometry, the sizes of the splitters in its pages, and the page it showed
(``Settings.window``), restored at the next start."""

from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QByteArray, QEvent, QObject
from PySide6.QtWidgets import QSplitter, QWidget

from san_desktop.app import SanApp
from san_desktop.core.errors import SanError
from san_desktop.core.settings import WindowSettings

log = logging.getLogger(__name__)


def encode_splitters(sizes: dict[str, list[int]]) -> str:
    """``{"cards.splitter": [300, 700]}`` as ``"cards.splitter=300,700"`` (pairs joined by ``;``)."""
    return ";".join(
        f"{name}={','.join(str(max(0, size)) for size in values)}" for name, values in sorted(sizes.items())
    )


def decode_splitters(text: str) -> dict[str, list[int]]:
    """The inverse of ``encode_splitters``; malformed pairs are left out."""
    sizes: dict[str, list[int]] = {}
    for pair in filter(None, text.split(";")):
        name, _, values = pair.partition("=")
        try:
            sizes[name] = [int(value) for value in values.split(",")]
        except ValueError:
            log.debug("Splitter sizes not understood: %r", pair)
    return sizes


def splitter_names(prefix: str, widget: QWidget) -> dict[str, QSplitter]:
    """The splitters inside ``widget``, each named ``prefix.<objectName>`` (or ``prefix.splitter<n>``, in
    the order they were made, for one without a name)."""
    named: dict[str, QSplitter] = {}
    unnamed = 0
    for splitter in widget.findChildren(QSplitter):
        if splitter.objectName():
            named[f"{prefix}.{splitter.objectName()}"] = splitter
        else:
            named[f"{prefix}.splitter{unnamed}"] = splitter
            unnamed += 1
    return named


class WindowMemory(QObject):
    """Restores and collects the window's geometry and splitter sizes. A splitter's sizes are applied when
    it is first laid out (a page not shown yet has no real size, and sizes set before would be
    redistributed); a splitter never shown in this session keeps the sizes it had. No signals of its own."""

    def __init__(self, window: QWidget, stored: WindowSettings) -> None:
        super().__init__(window)
        self._window = window
        self._stored = stored
        self._pending = decode_splitters(stored.splitters)
        self._splitters: dict[str, QSplitter] = {}
        self._laid_out: set[str] = set()

    def restore_geometry(self) -> bool:
        """Put the window where it was (Qt moves it onto a screen when that one is gone)."""
        if not self._stored.geometry:
            return False
        return bool(self._window.restoreGeometry(QByteArray.fromBase64(self._stored.geometry.encode("ascii"))))

    def register_splitter(self, name: str, splitter: QSplitter) -> None:
        """Remember ``splitter``'s sizes under ``name`` (letters, digits, ``_.-``)."""
        self._splitters[name] = splitter
        splitter.setProperty("remembered_as", name)
        splitter.installEventFilter(self)
        if splitter.isVisible() and not splitter.size().isEmpty():
            self._laid_out_now(name, splitter)

    def register_splitters_in(self, prefix: str, widget: QWidget) -> None:
        for name, splitter in splitter_names(prefix, widget).items():
            self.register_splitter(name, splitter)

    def state(self, last_page: str) -> WindowSettings:
        sizes: dict[str, list[int]] = {}
        for name, splitter in self._splitters.items():
            if name in self._laid_out:
                sizes[name] = splitter.sizes()
            elif name in self._pending:
                sizes[name] = self._pending[name]
        geometry = bytes(self._window.saveGeometry().toBase64().data()).decode("ascii")
        return WindowSettings(geometry=geometry, splitters=encode_splitters(sizes), last_page=last_page)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.Resize) and isinstance(watched, QSplitter):
            name = watched.property("remembered_as")
            visible = watched.isVisible() and not watched.size().isEmpty()
            if isinstance(name, str) and name not in self._laid_out and visible:
                self._laid_out_now(name, watched)
        return False

    def _laid_out_now(self, name: str, splitter: QSplitter) -> None:
        self._laid_out.add(name)
        sizes = self._pending.pop(name, None)
        if sizes is not None and len(sizes) == splitter.count() and sum(sizes) > 0:
            splitter.setSizes(sizes)  # any difference in total is shared out in proportion


def save_window_state(app: SanApp, state: WindowSettings) -> None:
    """Write ``state`` through the settings, on closing. Called once background work has stopped (nothing
    else writes the settings then); the file is taken up first, so what another program changed is kept."""
    try:
        app.reload_settings()
        if state != app.settings.window:
            app.save_settings(replace(app.settings, window=state))
    except Exception as exc:
        away = app.unreachable(exc)  # (a library on a server: its shared settings are read first)
        if away is None and not isinstance(exc, SanError):
            raise
        log.warning("The window's size and place were not saved: %s", away or exc)
