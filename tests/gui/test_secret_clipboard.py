"""A secret copied to the clipboard (the extension's token) is marked as one and taken off the clipboard when
the app quits, and only if it is still there; a process that copied one and quits exits cleanly (a
``QMimeData`` made by Python and left to the offscreen clipboard crashed it after the interpreter's end)."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from san_desktop.ui.common.secret_clipboard import SECRET_HINT, copy_secret, forget_secret

CHILD = """
import sys
from PySide6.QtWidgets import QApplication
from san_desktop.ui.common.secret_clipboard import copy_secret, forget_secret
app = QApplication(sys.argv)
copy_secret("a-token")
print(forget_secret())
"""


def test_the_secret_is_marked_and_taken_off_the_clipboard(qtbot: QtBot) -> None:
    clipboard = QGuiApplication.clipboard()
    copy_secret("a-token")
    mime = clipboard.mimeData()
    assert mime is not None
    assert mime.text() == "a-token"
    assert mime.hasFormat(SECRET_HINT)
    assert forget_secret()
    assert clipboard.text() == ""
    assert not forget_secret()  # (once)


def test_what_was_copied_after_the_secret_stays(qtbot: QtBot) -> None:
    clipboard = QGuiApplication.clipboard()
    copy_secret("a-token")
    clipboard.setText("copied afterwards")
    assert not forget_secret()
    assert clipboard.text() == "copied afterwards"
    clipboard.clear()


def test_a_process_that_copied_a_secret_quits_cleanly() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"
