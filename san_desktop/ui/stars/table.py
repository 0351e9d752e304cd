"""The ranked recommendations as a table: rank, repository (its name in bold, its description beneath),
why it matches, language, topics and stars; archived repositories greyed and marked. Long texts wrap (rows
as tall as they need), the columns share the width the page has, and every cell has its text as a tooltip."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt, QTimer
from PySide6.QtGui import QPainter, QPalette, QResizeEvent, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from san_desktop.ui.common.look import tone
from san_desktop.ui.stars.state import compact_count

if TYPE_CHECKING:  # numpy comes with the star service: it loads with the page's first read, after the first frame
    from san_desktop.services.stars import Recommendation

RANK, REPOSITORY, REASON, LANGUAGE, TOPICS, STARS = range(6)
DESCRIPTION_CHARS = 100  # of the description shown under the name (the tooltip has all of it)
# column widths: fixed ones, and the shares of the rest (each at least its minimum; narrower, it scrolls)
FIXED_WIDTHS = {RANK: 40, LANGUAGE: 90, STARS: 60}
SHARES = {REPOSITORY: (0.36, 170), REASON: (0.44, 200), TOPICS: (0.20, 100)}
PADDING = 4  # around a rich-text cell's document, as the plain cells have

_Index = QModelIndex | QPersistentModelIndex


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class StarsTableModel(QAbstractTableModel):
    """The recommendations shown, in rank order. No signals of its own."""

    COLUMNS = ("#", "Repository", "Why it matches", "Language", "Topics", "Stars")

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Recommendation] = []

    def set_rows(self, rows: list[Recommendation]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def remove(self, repository_id: str) -> int | None:
        """Take a repository's row out; the row it had, or None when it was not shown."""
        for row, item in enumerate(self.rows):
            if item.repository_id == repository_id:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.rows[row]
                self.endRemoveRows()
                return row
        return None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == STARS:
            return "Stargazers on GitHub"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(item, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(item, column)
        if role == Qt.ItemDataRole.ForegroundRole and item.archived:
            return tone("muted")
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (RANK, STARS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        if role == Qt.ItemDataRole.UserRole:
            return item
        return None

    @staticmethod
    def repository_html(item: Recommendation, description_colour: str) -> str:
        """The repository cell as the delegate draws it."""
        name = f"<b>{html.escape(item.full_name)}</b>"
        if item.archived:
            name += f" <span style='color:{tone('muted').name()}'>[archived]</span>"
        description = html.escape(_shortened(item.description.strip(), DESCRIPTION_CHARS))
        return f"{name}<br><span style='color:{description_colour}'>{description}</span>" if description else name

    @staticmethod
    def _display(item: Recommendation, column: int) -> str:
        if column == RANK:
            return str(item.rank)
        if column == REPOSITORY:
            name = f"{item.full_name}  [archived]" if item.archived else item.full_name
            description = _shortened(item.description.strip(), DESCRIPTION_CHARS)
            return f"{name}\n{description}" if description else name
        if column == REASON:
            return item.reason
        if column == LANGUAGE:
            return item.language or "—"
        if column == TOPICS:
            return ", ".join(item.topics)
        return compact_count(item.stars)

    @staticmethod
    def _tooltip(item: Recommendation, column: int) -> str:
        if column == REPOSITORY:
            archived = "\nArchived: read-only, no longer maintained." if item.archived else ""
            return f"{item.full_name}\n{item.description}\n{item.html_url}{archived}".replace("\n\n", "\n")
        if column == STARS:
            return f"{item.stars:,} stars"
        if column == RANK:
            return f"Rank {item.rank} of the latest ranking (score {item.score:.2f})"
        return StarsTableModel._display(item, column)


class RepositoryDelegate(QStyledItemDelegate):
    """Draws the repository cell as rich text (the name bold, the description in a quieter colour) and
    says how tall it is at its column's width. No signals."""

    def _document(self, option: QStyleOptionViewItem, index: _Index, width: int) -> QTextDocument:
        from san_desktop.services.stars import Recommendation  # a row is drawn: rows were read, it is loaded

        item = index.data(Qt.ItemDataRole.UserRole)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        group = QPalette.ColorGroup.Active
        text = option.palette.color(group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        quiet = text.name() if selected else tone("muted").name()
        document = QTextDocument()
        document.setDocumentMargin(PADDING)
        document.setDefaultFont(option.font)
        colour = tone("muted").name() if isinstance(item, Recommendation) and item.archived else text.name()
        document.setDefaultStyleSheet(f"body {{ color: {colour}; }}")
        body = StarsTableModel.repository_html(item, quiet) if isinstance(item, Recommendation) else ""
        document.setHtml(f"<body>{body}</body>")
        document.setTextWidth(max(width, 1))
        return document

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        cell.text = ""
        style = cell.widget.style() if cell.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, cell, painter, cell.widget)
        document = self._document(cell, index, cell.rect.width())
        painter.save()
        painter.translate(cell.rect.topLeft())
        painter.setClipRect(cell.rect.translated(-cell.rect.topLeft()))
        document.drawContents(painter)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        # a word-wrapping table measures rows with the column's width in the option
        document = self._document(cell, index, cell.rect.width() or 250)
        return QSize(int(document.idealWidth()), int(document.size().height()))


class StarsTable(QTableView):
    """A ``StarsTableModel`` with rows as tall as their wrapped text; one row is chosen at a time.
    No signals of its own (``activated`` opens a row)."""

    def __init__(self, model: StarsTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(36)
        self.setItemDelegateForColumn(REPOSITORY, RepositoryDelegate(self))
        self.fit_columns()
        # row heights follow the wrapped text: measured again when a column's width changes (once per
        # burst of resizes, not per pixel)
        self._fit = QTimer(self)
        self._fit.setSingleShot(True)
        self._fit.setInterval(0)
        self._fit.timeout.connect(self.resizeRowsToContents)
        header.sectionResized.connect(self._on_header_section_resized)
        model.modelReset.connect(self.resizeRowsToContents)

    def fit_columns(self) -> None:
        """Share the width there is: the short columns keep theirs, the long ones split the rest."""
        for column, width in FIXED_WIDTHS.items():
            self.setColumnWidth(column, width)
        rest = self.viewport().width() - sum(FIXED_WIDTHS.values())
        for column, (share, least) in SHARES.items():
            self.setColumnWidth(column, max(least, int(rest * share)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_columns()

    def _on_header_section_resized(self, _section: int, _old: int, _new: int) -> None:
        self._fit.start()
