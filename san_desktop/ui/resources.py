from __future__ import annotations

from importlib.resources import files

from PySide6.QtGui import QIcon


def app_icon() -> QIcon:
    return QIcon(str(files("san_desktop.resources") / "icons" / "san.svg"))
