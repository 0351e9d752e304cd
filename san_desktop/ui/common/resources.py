"""Icons from ``resources/icons`` (installed as ``san_desktop.resources.icons``).

The page icons are one-colour line drawings. QIcon cannot recolour an SVG (``currentColor`` means black to
it), so each is rendered with QSvgRenderer at the screen's pixel density and tinted with the palette's colour
for its state: it follows a light or dark palette and stays crisp on high-DPI screens.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

_ICONS = files("san_desktop.resources") / "icons"


def app_icon() -> QIcon:
    return QIcon(str(_ICONS / "san.svg"))


@cache
def icon_svg(name: str) -> bytes:
    """The SVG text of ``resources/icons/<name>.svg``."""
    return (_ICONS / f"{name}.svg").read_bytes()


def tinted_pixmap(name: str, size: QSize, colour: QColor, scale: float = 1.0) -> QPixmap:
    """``name``'s drawing at ``size`` (device-independent pixels) times ``scale`` (the screen's device pixel
    ratio), every drawn pixel in ``colour`` with its own coverage kept (antialiased edges stay smooth)."""
    renderer = QSvgRenderer(QByteArray(icon_svg(name)))
    image = QImage(size * scale, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    painter.fillRect(image.rect(), colour)
    painter.end()
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(scale)
    return pixmap


def tinted_icon(name: str, palette: QPalette, size: QSize, scales: tuple[float, ...] = (1.0, 2.0)) -> QIcon:
    """An icon of ``name`` in the palette's text colour (highlighted text when selected, the disabled text
    colour when disabled), with a pixmap for each of ``scales`` so Qt never scales a bitmap up."""
    icon = QIcon()
    modes = {
        QIcon.Mode.Normal: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText),
        QIcon.Mode.Active: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText),
        QIcon.Mode.Selected: palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText),
        QIcon.Mode.Disabled: palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText),
    }
    for mode, colour in modes.items():
        for scale in sorted(set(scales)):
            icon.addPixmap(tinted_pixmap(name, size, colour, scale), mode)
    return icon
