"""The page list at the side of the window: an icon and a name per page, on the window's own background,
the current page marked by a rounded highlight. Everything is painted from the palette, so it follows a
light or dark palette (also when the system switches while the app runs)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from san_desktop.ui.common.look import NAV_ICON, NAV_ROW_HEIGHT, NAV_WIDTH, SPACE_S, SPACE_XS
from san_desktop.ui.common.resources import tinted_icon

KEY_ROLE = Qt.ItemDataRole.UserRole
ICON_ROLE = Qt.ItemDataRole.UserRole + 1  # the name of the item's drawing in resources/icons


class _NavigationDelegate(QStyledItemDelegate):
    """Paints a row: rounded highlight when current (a faint one under the mouse), icon, name."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(NAV_WIDTH, max(NAV_ROW_HEIGHT, option.fontMetrics.height() + 2 * SPACE_S))

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        group = QPalette.ColorGroup.Active if enabled else QPalette.ColorGroup.Disabled
        pill = option.rect.adjusted(SPACE_S, 2, -SPACE_S, -2)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        if selected:
            painter.setBrush(palette.color(group, QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(pill, 6, 6)
        elif hovered:
            faint = QColor(palette.color(group, QPalette.ColorRole.Highlight))
            faint.setAlpha(40)
            painter.setBrush(faint)
            painter.drawRoundedRect(pill, 6, 6)

        icon = index.data(Qt.ItemDataRole.DecorationRole)
        x = pill.left() + SPACE_S + SPACE_XS
        if isinstance(icon, QIcon) and not icon.isNull():
            mode = QIcon.Mode.Selected if selected else QIcon.Mode.Normal if enabled else QIcon.Mode.Disabled
            icon_rect = QRect(x, pill.center().y() - NAV_ICON // 2 + 1, NAV_ICON, NAV_ICON)
            icon.paint(painter, icon_rect, Qt.AlignmentFlag.AlignCenter, mode)
            x = icon_rect.right() + 1 + SPACE_S + SPACE_XS

        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.WindowText
        painter.setPen(palette.color(group, role))
        font = option.font
        font.setWeight(QFont.Weight.DemiBold if selected else QFont.Weight.Normal)
        painter.setFont(font)
        text_rect = QRect(x, pill.top(), pill.right() - x - SPACE_S, pill.height())
        text = painter.fontMetrics().elidedText(str(index.data() or ""), Qt.TextElideMode.ElideRight, text_rect.width())
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)
        painter.restore()


class NavigationList(QListWidget):
    """The list of pages. Each item holds its page's key (``KEY_ROLE``). No signals of its own beyond
    QListWidget's (``currentRowChanged`` switches the page)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("navigation")
        self.setFixedWidth(NAV_WIDTH)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setItemDelegate(_NavigationDelegate(self))
        self.setIconSize(QSize(NAV_ICON, NAV_ICON))
        self.setMouseTracking(True)  # the hover highlight
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Window)  # part of the window, not a white box
        self.viewport().setAutoFillBackground(True)
        self.setViewportMargins(0, SPACE_S, 0, 0)

    def add_page(self, key: str, label: str, icon_name: str, description: str = "") -> QListWidgetItem:
        item = QListWidgetItem(label)
        item.setData(KEY_ROLE, key)
        item.setData(ICON_ROLE, icon_name)
        item.setToolTip(description or label)
        self.addItem(item)
        self._tint(item)
        return item

    def beside(self, pages: QWidget) -> QHBoxLayout:
        """A layout with the list, a dividing line and ``pages``."""
        layout = QHBoxLayout()
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self)
        divider = QFrame()
        divider.setFrameShape(QFrame.Shape.VLine)
        divider.setFrameShadow(QFrame.Shadow.Sunken)
        layout.addWidget(divider)
        layout.addWidget(pages, 1)
        return layout

    def key_at(self, row: int) -> str | None:
        item = self.item(row)
        return None if item is None else str(item.data(KEY_ROLE))

    def row_of(self, key: str) -> int:
        for row in range(self.count()):
            if self.key_at(row) == key:
                return row
        raise KeyError(key)

    def _tint(self, item: QListWidgetItem) -> None:
        scales = (1.0, 2.0, self.devicePixelRatioF())
        item.setIcon(tinted_icon(str(item.data(ICON_ROLE)), self.palette(), self.iconSize(), scales))

    def changeEvent(self, event: QEvent) -> None:
        # A new palette (the system switched to dark) or a screen of another pixel density: redraw the icons.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            for row in range(self.count()):
                self._tint(self.item(row))
        super().changeEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.DevicePixelRatioChange:
            for row in range(self.count()):
                self._tint(self.item(row))
        return super().event(event)
