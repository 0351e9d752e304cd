"""The window chrome's measures: one spacing scale (multiples of 4 px) and one type scale (steps from the
application font), so the navigation, dialogs and status bar line up. Colours come from the palette, and the
few status colours it has no role for (``tone``) have a light and a dark variant: the window follows the
system's light or dark palette."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette, QScreen
from PySide6.QtWidgets import QLayout, QWidget

SPACE_XS = 4
SPACE_S = 8
SPACE_M = 12
SPACE_L = 16
SPACE_XL = 24

NAV_WIDTH = 184
NAV_ROW_HEIGHT = 36
NAV_ICON = 20


def scaled_font(base: QFont, step: int = 0, *, bold: bool = False) -> QFont:
    """``base`` ``step`` steps up (or down) the type scale: each step is about 1.2 times larger."""
    font = QFont(base)
    size = base.pointSizeF()
    if size > 0:
        font.setPointSizeF(round(size * 1.2**step, 1))
    if bold:
        font.setWeight(QFont.Weight.DemiBold)
    return font


def set_margins(layout: QLayout, horizontal: int = SPACE_L, vertical: int = SPACE_M, spacing: int = SPACE_S) -> None:
    layout.setContentsMargins(horizontal, vertical, horizontal, vertical)
    layout.setSpacing(spacing)


# Status colours, each readable on a light and on a dark window (the palette has no roles for them).
_TONES: dict[str, tuple[str, str]] = {  # name: (on light, on dark)
    "error": ("#b3261e", "#f2b8b5"),
    "success": ("#2e7d32", "#81c995"),
    "info": ("#1565c0", "#8ab4f8"),
    "warning": ("#8a5300", "#fdd663"),
    "muted": ("#666666", "#a8a8a8"),
    "tag": ("#2f6f5e", "#7fcfb7"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    window = (palette or QGuiApplication.palette()).color(QPalette.ColorRole.Window)
    return window.lightness() < 128


def tone(name: str, palette: QPalette | None = None) -> QColor:
    """The status colour ``name`` ("error", "success", "info", "warning", "muted", "tag") for the palette
    in use (the application's unless given)."""
    light, dark = _TONES[name]
    return QColor(dark if is_dark(palette) else light)


def tone_style(name: str) -> str:
    """A style sheet colouring a label's text with ``tone(name)``."""
    return f"color: {tone(name).name()};"


SCREEN_SHARE = 0.9  # a window made to fit takes at most this much of the screen's free area each way


def fit_on_screen(window: QWidget, largest: QSize, screen: QScreen | None = None) -> None:
    """Size ``window`` to ``largest``, or less where the screen's available area (without panels and docks)
    is smaller, and center it there: on a 1366×768 laptop it fits whole. ``screen``: the primary one."""
    free = (screen or QGuiApplication.primaryScreen()).availableGeometry()
    size = QSize(
        min(largest.width(), int(free.width() * SCREEN_SHARE)), min(largest.height(), int(free.height() * SCREEN_SHARE))
    )
    size = size.expandedTo(window.minimumSizeHint()).boundedTo(free.size())
    window.resize(size)
    placed = QRect(free.topLeft(), size)
    placed.moveCenter(free.center())
    window.move(placed.topLeft())


def fit_height_on_screen(window: QWidget, height: int) -> None:
    """Make a shown (or about to be shown) ``window`` ``height`` tall, or as tall as its screen's available area
    allows (``SCREEN_SHARE`` of it, as ``fit_on_screen``); moved up if its bottom would leave that area."""
    free = window.screen().availableGeometry()
    height = max(window.minimumHeight(), min(height, int(free.height() * SCREEN_SHARE)))
    window.resize(window.width(), height)
    frame = window.frameGeometry()
    if frame.bottom() > free.bottom():
        window.move(window.x(), max(free.top(), window.y() - (frame.bottom() - free.bottom())))
