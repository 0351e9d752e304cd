"""Tables whose columns fit: widths shared out of the width the table has (no horizontal scrolling unless
the window is narrower than the columns' minimums), and long texts cut after a whole word with "…",
never in the middle of one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

ELLIPSIS = "…"
LEAST_FILL = 0.4  # whole words that fill less of the width than this give way to cutting inside a word
_WORD_END = re.compile(r"\s+|(?<=/)(?=\w)")  # a space, or between "Architecture/" and "Design"
_TRAILING = " \t\n,;:·-–—/"  # not left dangling before the ellipsis

_Index = QModelIndex | QPersistentModelIndex


def elide_words(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` as it fits in ``width`` pixels: whole, or its longest run of whole words that fits with
    "…" after it. Only when whole words would leave most of the width empty (a first word too long on its
    own, an address) is the text cut inside a word, as Qt cuts it."""
    # no character is narrower than a pixel: what lies past ``width`` characters never shows (a scrap's
    # whole text, measured prefix by prefix, made a repaint of the Inbox take a third of a second)
    whole, text = text, text[: max(width, 0) + 1]
    if text == whole and metrics.horizontalAdvance(text) <= width:
        return text
    cuts = [match.start() for match in _WORD_END.finditer(text) if match.start() > 0]

    def shortened(count: int) -> str:  # the text to the ``count``-th word end, with the ellipsis
        return text[: cuts[count - 1]].rstrip(_TRAILING) + ELLIPSIS

    # the longer the prefix, the wider it is: the most words that fit, by bisection (a few measurements)
    low, high = 0, len(cuts)
    while low < high:
        middle = (low + high + 1) // 2
        if metrics.horizontalAdvance(shortened(middle)) <= width:
            low = middle
        else:
            high = middle - 1
    if low and metrics.horizontalAdvance(shortened(low)) >= width * LEAST_FILL:
        return shortened(low)
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)


class WordElideDelegate(QStyledItemDelegate):
    """Draws a one-line cell with its text cut at a word boundary when it does not fit. No signals.

    What a text becomes at a cell's width is remembered: a row added on top repaints every row below it
    with the texts it had, and measuring them again was most of a repaint."""

    REMEMBERED = 4096

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fitted_texts: dict[tuple[str, int, str, bool], str] = {}

    def shown_text(self, option: QStyleOptionViewItem, index: _Index) -> str:
        """The text the cell at ``index`` shows when drawn with ``option`` (its rect: the cell's)."""
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        return self._fitted(cell)

    def _fitted(self, cell: QStyleOptionViewItem) -> str:
        decorated = bool(cell.features & QStyleOptionViewItem.ViewItemFeature.HasDecoration)
        key = (cell.text, cell.rect.width(), cell.font.key(), decorated)
        fitted = self._fitted_texts.get(key)
        if fitted is None:
            if len(self._fitted_texts) >= self.REMEMBERED:
                self._fitted_texts.clear()
            fitted = self._fitted_texts[key] = self._fit(cell)
        return fitted

    def _fit(self, cell: QStyleOptionViewItem) -> str:
        widget = cell.widget
        style = widget.style() if widget is not None else QApplication.style()
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, cell, widget)
        # the style draws the text inside this margin on both sides
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        return elide_words(cell.text.replace("\n", " "), cell.fontMetrics, text_rect.width() - 2 * margin)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        cell.text = self._fitted(cell)
        widget = cell.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, cell, painter, widget)


@dataclass(frozen=True)
class Column:
    """How wide a column is: ``sample`` (text it must show whole: the column keeps that width) or a
    ``share`` of the width left over, never under ``least`` pixels."""

    share: float = 0.0
    least: int = 48
    sample: str = ""


class ColumnFitter(QObject):
    """Keeps a table's columns as wide as its viewport together, by ``columns`` (each column of the model
    listed): after every resize of the table, and when a scroll bar comes or goes. A column the user drags
    keeps its width until the table is resized. No signals."""

    def __init__(self, view: QTableView, columns: Mapping[int, Column]) -> None:
        super().__init__(view)
        self._view = view
        self._columns = dict(columns)
        header = view.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        view.viewport().installEventFilter(self)
        self.fit()

    def fixed_width(self, column: int) -> int:
        """A sample column's width: its sample or its header, whichever is wider, with the cell's margins."""
        view = self._view
        style = view.style()
        header = view.horizontalHeader()
        label = str(view.model().headerData(column, Qt.Orientation.Horizontal) or "")
        cell_margin = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1) + 8
        header_margin = 2 * style.pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header) + 8
        return max(
            view.fontMetrics().horizontalAdvance(self._columns[column].sample) + cell_margin,
            header.fontMetrics().horizontalAdvance(label) + header_margin,
        )

    def fit(self) -> None:
        available = self._view.viewport().width()
        widths = {column: self.fixed_width(column) for column, spec in self._columns.items() if spec.sample}
        rest = available - sum(widths.values())
        shared = {column: spec for column, spec in self._columns.items() if not spec.sample}
        total = sum(spec.share for spec in shared.values()) or 1.0
        for column, spec in shared.items():
            widths[column] = max(spec.least, int(rest * spec.share / total))
        leftover = available - sum(widths.values())  # rounding: to the widest shared column
        if leftover > 0 and shared:
            widest = max(shared, key=lambda column: shared[column].share)
            widths[widest] += leftover
        for column, width in widths.items():
            self._view.setColumnWidth(column, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and isinstance(watched, QWidget):
            self.fit()
        return False
