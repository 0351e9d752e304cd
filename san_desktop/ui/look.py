"""The window chrome's measures: one spacing scale (multiples of 4 px) and one type scale (steps from the
application font), so the navigation, dialogs and status bar line up. Colours always come from the palette,
never from here: the window follows the system's light or dark palette."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLayout

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
