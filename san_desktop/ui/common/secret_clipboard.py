"""A secret copied to the clipboard (the browser extension's token): marked as one, so that clipboard
managers keep no history of it and SAN's own watcher leaves it, and taken off the clipboard when the app
quits, as password managers do.

Taking it off also matters to Qt: the clipboard then owns a ``QMimeData`` made by Python, and a platform
whose clipboard outlives the interpreter (the offscreen one the tests run on) deletes it after Python has
finalised, which crashes the process on its way out."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QByteArray, QMimeData
from PySide6.QtGui import QGuiApplication

# what password managers mark a secret with
SECRET_HINT = "x-kde-passwordManagerHint"

_copied: list[QMimeData] = []  # the secret this process put on the clipboard, while it may still be there


def copy_secret(text: str) -> None:
    mime = QMimeData()
    mime.setText(text)
    mime.setData(SECRET_HINT, QByteArray(b"secret"))
    QGuiApplication.clipboard().setMimeData(mime)
    _copied[:] = [mime]


def forget_secret() -> bool:
    """Clears the clipboard if it still holds the secret copied here; whether it did. Qt deletes the data it
    was given as soon as anything else is copied, in this app or another, so no other program's clipboard is
    read or cleared (nor waited on)."""
    held = [mime for mime in _copied if shiboken6.isValid(mime)]
    _copied.clear()
    if not held:
        return False
    QGuiApplication.clipboard().clear()
    return True
