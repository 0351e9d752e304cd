"""Quitting as one step, whichever way it is asked for (Ctrl+Q in any window, the tray's Quit, the main
window's close button): every other window of the app with unsaved edits is asked about once, together;
then every window closes, so none outlives the main one and the app ends when that one closes (Qt quits
on its last window closing; the tray icon keeps nothing alive)."""

from __future__ import annotations

import logging
from functools import partial

from PySide6.QtWidgets import QApplication, QWidget

from san_desktop.ui.common.unsaved import AskUnsaved, KeepsEdits, Unsaved

log = logging.getLogger(__name__)


class QuitGuard:
    """Says whether the main window may close now, settling the other windows first. No signals."""

    def __init__(self, main: QWidget, ask: AskUnsaved) -> None:
        self._main = main
        self._ask = ask
        self._saving: set[KeepsEdits] = set()  # saves asked for by the last answer, not done yet

    def others(self) -> list[QWidget]:
        """The app's other windows that are open (dialogs of the main window included)."""
        return [w for w in QApplication.topLevelWidgets() if w is not self._main and w.isVisible()]

    def ready(self) -> bool:
        """True when the main window may close: nothing was unsaved, or the answer was Discard, and every
        other window has closed. False on Cancel (nothing closes), and while the edits are being saved
        after Save: once every save is done, the main window is closed again; a save that fails stops
        the quit (its window shows why and keeps the edits)."""
        if self._saving:
            return False  # asked already; the saves will close the main window
        others = self.others()
        keeping = [w for w in others if isinstance(w, KeepsEdits)]
        unsaved = [(w, label) for w in keeping if (label := w.unsaved_edits())]
        if unsaved:
            answer = self._ask(self._main, [label for _w, label in unsaved])
            if answer is Unsaved.CANCEL:
                return False
            if answer is Unsaved.SAVE:
                self._save([w for w, _label in unsaved])
                return False
            for edited, _label in unsaved:
                edited.discard_edits()
        for other in others:
            other.close()
        refused = [w for w in others if w.isVisible()]
        if refused:
            log.info("Not quitting: %s did not close", refused[0].windowTitle())
            return False
        return True

    def _save(self, windows: list[KeepsEdits]) -> None:
        self._saving = set(windows)
        for window in windows:
            window.save_edits(partial(self._on_saved, window))

    def _on_saved(self, window: KeepsEdits, ok: bool) -> None:
        if window not in self._saving:
            return
        if not ok:
            self._saving.clear()  # the quit stops here: that window says what went wrong
            if isinstance(window, QWidget):
                window.raise_()
                window.activateWindow()
            return
        self._saving.discard(window)
        if not self._saving:
            self._main.close()
