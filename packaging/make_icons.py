"""Render the app icon (resources/icons/san.svg) as the PNG sizes desktops look for, into a hicolor tree:

    python packaging/make_icons.py OUT_DIR [--svg FILE]

writes ``OUT_DIR/hicolor/<N>x<N>/apps/san-desktop.png`` for every size in ``SIZES`` and copies the SVG to
``OUT_DIR/hicolor/scalable/apps/san-desktop.svg``. Run at package time (the PNGs are build products, not
checked in); needs PySide6 and no display (Qt's offscreen platform).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICON_NAME = "san-desktop"  # the .desktop file's Icon= and the app id
DEFAULT_SVG = Path(__file__).resolve().parents[1] / "resources" / "icons" / "san.svg"


def render(svg: Path, out_dir: Path, sizes: tuple[int, ...] = SIZES) -> list[Path]:
    """Write the PNGs and the scalable copy; returns every file written."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: {svg} is not an SVG that Qt can render")
    written: list[Path] = []
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)  # scaled to the whole image: the SVG is square
        painter.end()
        target = out_dir / "hicolor" / f"{size}x{size}" / "apps" / f"{ICON_NAME}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target)):  # PNG, from the suffix
            raise SystemExit(f"make_icons: could not write {target}")
        written.append(target)
    scalable = out_dir / "hicolor" / "scalable" / "apps" / f"{ICON_NAME}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    written.append(scalable)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render the SAN Desktop icon in the sizes desktops expect.")
    parser.add_argument("out_dir", type=Path, help="where the hicolor/ tree is written")
    parser.add_argument("--svg", type=Path, default=DEFAULT_SVG, help=f"the source icon (default: {DEFAULT_SVG})")
    args = parser.parse_args(argv)
    for path in render(args.svg, args.out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
