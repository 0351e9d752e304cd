from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QTableView

Index = QModelIndex | QPersistentModelIndex
RowT = TypeVar("RowT")
# runs a page's query off the GUI thread: (query, deliver the rows, deliver a failure)
Background = Callable[[Callable[[], list[Any]], Callable[[list[Any]], None], Callable[[Exception], None]], None]


class LazyTableModel(QAbstractTableModel, Generic[RowT]):
    """Rows newest first, fetched a page at a time as the view scrolls (quick with 100,000 rows), and
    kept live by ``upsert``: a known row updates in place, a newer one appears on top.

    Rows live in a dict keyed by a sequence number: new rows get numbers above the top, older pages
    below the bottom, so both ends grow in O(1) and a row's position is ``top - seq``. Subclasses give
    ``COLUMNS``, ``fetch_page`` (rows older than an id, newest first), ``row_key`` (a time-ordered id)
    and ``cell``. With ``background``, pages are queried off the GUI thread and inserted when they
    arrive (a page that arrives after a reload is dropped).

    Live reads of single rows (``ask`` then ``answer``) may run on other threads than the pages: each
    read gets a ticket, an answer older than the newest read of its row is dropped, and a page read
    before a row's newest answer shows that answer instead of what it read (a row deleted or added
    while a page was on its way).

    Signals:
        loaded(): a page was read and taken (rows inserted, or none: the list is complete), or a
            ``refresh`` replaced the rows; a view tells "nothing here" from "not read yet" by it.
    """

    loaded = Signal()
    COLUMNS: Sequence[str] = ()
    # the roles ``cell`` answers: a view asks for a dozen on every cell it paints, and the others are
    # answered here without finding the row (a repaint of the Inbox spent most of its time on them)
    ROLES: frozenset[int] = frozenset(
        {Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole}
    )

    def __init__(self, page_size: int = 200, background: Background | None = None) -> None:
        super().__init__()
        self._page_size = page_size
        self._background = background
        self._loading = False
        self._generation = 0  # a reload starts a new one: pages asked for before it are dropped
        self._rows: dict[int, RowT] = {}
        self._seq_of: dict[str, int] = {}
        self._top = 0  # sequence number of row 0
        self._bottom = 1  # sequence number of the last row; empty when bottom > top
        self._exhausted = False
        self._ticket = 0  # numbers live reads; a page remembers the number current when it was asked
        self._asked: dict[str, int] = {}  # a row's newest live read not answered yet
        self._live: dict[str, tuple[int, RowT | None]] = {}  # a row's newest live answer (None: gone)
        self._floor = 0  # answers to reads asked before the newest whole-list read are older than it

    # --- for subclasses -----------------------------------------------------------------------

    def fetch_page(self, before_id: str | None, limit: int) -> list[RowT]:
        raise NotImplementedError

    def row_key(self, row: RowT) -> str:
        raise NotImplementedError

    def cell(self, row: RowT, column: int, role: int) -> Any:
        raise NotImplementedError

    # --- loading ------------------------------------------------------------------------------

    @property
    def loading(self) -> bool:
        return self._loading

    def reload(self) -> None:
        self._generation += 1
        self._loading = False
        self._clear()
        if self.canFetchMore(QModelIndex()):
            self.fetchMore(QModelIndex())

    def refresh(self, background: Background | None = None) -> None:
        """Read the newest page again, off the GUI thread (with ``background``, else the model's own), and
        show it in place of the loaded rows at once: no empty moment between, unlike ``reload``."""
        run = background or self._background
        if run is None:
            self.reload()
            return
        self._generation += 1
        generation = self._generation
        self._loading = True  # no older page is asked for meanwhile: the rows are about to be replaced
        limit = self._page_size
        asked = self._ticket

        def arrived(rows: list[RowT]) -> None:
            if generation == self._generation:
                self._loading = False
                self._clear()
                self._take_page(rows, asked, whole=True)

        def failed(_exc: Exception) -> None:
            if generation == self._generation:
                self._loading = False

        run(lambda: self.fetch_page(None, limit), arrived, failed)

    def _clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self._seq_of.clear()
        self._top, self._bottom = 0, 1
        self._exhausted = False
        self.endResetModel()

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and not self._exhausted and not self._loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008 - Qt's signature
        if parent.isValid() or self._exhausted or self._loading:
            return
        oldest = self.row_key(self._rows[self._bottom]) if self.rowCount() else None
        limit = self._page_size
        asked, whole = self._ticket, oldest is None
        if self._background is None:
            self._take_page(self.fetch_page(oldest, limit), asked, whole)
            return
        self._loading = True
        generation = self._generation

        def arrived(rows: list[RowT]) -> None:
            if generation == self._generation:
                self._loading = False
                self._take_page(rows, asked, whole)

        def failed(_exc: Exception) -> None:
            if generation == self._generation:
                self._loading = False  # the next scroll asks again

        self._background(lambda: self.fetch_page(oldest, limit), arrived, failed)

    def _take_page(self, fetched: list[RowT], asked: int, whole: bool) -> None:
        """Take a page read when the ticket was ``asked``; ``whole``: the first page of a new list."""
        if len(fetched) < self._page_size:
            self._exhausted = True
        newer = {key: row for key, (ticket, row) in self._live.items() if ticket > asked}
        page: list[RowT] = []
        for fetched_row in fetched:
            row = newer.get(self.row_key(fetched_row), fetched_row)
            if row is not None and self.row_key(row) not in self._seq_of:
                page.append(row)
        if page:
            first = self.rowCount()
            self.beginInsertRows(QModelIndex(), first, first + len(page) - 1)
            for row in page:  # an empty model has top 0 and bottom 1: the newest row gets number 0
                self._bottom -= 1
                self._rows[self._bottom] = row
                self._seq_of[self.row_key(row)] = self._bottom
            self.endInsertRows()
        if whole:
            for row in newer.values():  # added while the page was on its way
                if row is not None:
                    self.upsert(row)
            self._floor = max(self._floor, asked)
            self._live = {key: answer for key, answer in self._live.items() if answer[0] > asked}
            self._asked = {key: ticket for key, ticket in self._asked.items() if ticket > asked}
        self.loaded.emit()

    # --- live reads of single rows ------------------------------------------------------------

    def ask(self, keys: Sequence[str]) -> int:
        """A read of these rows starts (off the GUI thread): its ticket, for ``answer``."""
        self._ticket += 1
        for key in keys:
            self._asked[key] = self._ticket
        return self._ticket

    def answer(self, ticket: int, key: str, row: RowT | None) -> bool:
        """What the read ``ticket`` found for ``key`` (None: gone); dropped when a newer read of the row
        was asked or answered, or a whole page was read since. True when it was taken."""
        newest = max(self._asked.get(key, 0), self._live.get(key, (0, None))[0])
        if ticket <= self._floor or ticket < newest:
            return False
        if self._asked.get(key) == ticket:
            del self._asked[key]
        self._live[key] = (ticket, row)
        if row is None:
            self.remove(key)
        else:
            self.upsert(row)
        return True

    # --- live updates -------------------------------------------------------------------------

    def upsert(self, row: RowT) -> None:
        """Update a loaded row in place, or insert a new one where it belongs: on top when it is newer
        than all loaded rows, between loaded rows when it falls among them (a card made out of order by
        two workers). A row older than every loaded one waits until it is scrolled to, unless everything
        is loaded already."""
        key = self.row_key(row)
        seq = self._seq_of.get(key)
        if seq is not None:
            self._rows[seq] = row
            position = self._top - seq
            self.dataChanged.emit(self.index(position, 0), self.index(position, len(self.COLUMNS) - 1))
            return
        count = self.rowCount()
        if count and key < self.row_key(self._rows[self._bottom]) and not self._exhausted:
            return
        position = self._insert_position(key)
        self.beginInsertRows(QModelIndex(), position, position)
        if not count:
            self._top, self._bottom = 0, 0
            self._rows[0] = row
            self._seq_of[key] = 0
        else:
            target = self._top - position + 1  # the new row's number; newer rows move up by one
            for moving in range(self._top, target - 1, -1):
                self._rows[moving + 1] = self._rows[moving]
                self._seq_of[self.row_key(self._rows[moving + 1])] = moving + 1
            self._top += 1
            self._rows[target] = row
            self._seq_of[key] = target
        self.endInsertRows()

    def upsert_many(self, rows: Sequence[RowT]) -> None:
        """``upsert`` each of ``rows``; new rows newer than every loaded one (what an import or a busy runner
        adds) go on top in one insertion, not one each: each insertion lays out and repaints the view."""
        top_key = self.row_key(self._rows[self._top]) if self.rowCount() else None
        newest: dict[str, RowT] = {}
        for row in rows:
            key = self.row_key(row)
            if key in self._seq_of or (top_key is not None and key <= top_key):
                self.upsert(row)
            else:
                newest[key] = row
        if not newest:
            return
        if not self.rowCount():
            self._top, self._bottom = -1, 0  # (empty: the first new row gets number 0)
        self.beginInsertRows(QModelIndex(), 0, len(newest) - 1)
        for key in sorted(newest):  # oldest first: each goes above the one before
            self._top += 1
            self._rows[self._top] = newest[key]
            self._seq_of[key] = self._top
        self.endInsertRows()

    def _insert_position(self, key: str) -> int:
        """How many loaded rows are newer than ``key`` (rows are newest first): a binary search."""
        low, high = 0, self.rowCount()
        while low < high:
            middle = (low + high) // 2
            if self.row_key(self._rows[self._top - middle]) > key:
                low = middle + 1
            else:
                high = middle
        return low

    def remove(self, key: str) -> None:
        """Drop a row (deleted item): rows below move up."""
        seq = self._seq_of.pop(key, None)
        if seq is None:
            return
        position = self._top - seq
        self.beginRemoveRows(QModelIndex(), position, position)
        for moving in range(seq, self._top):
            self._rows[moving] = self._rows[moving + 1]
            self._seq_of[self.row_key(self._rows[moving])] = moving
        del self._rows[self._top]
        self._top -= 1
        self.endRemoveRows()

    # --- Qt model API -------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else max(0, self._top - self._bottom + 1)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.COLUMNS)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        # Qt's own asks rowCount and columnCount (two calls into Python a cell painted): one here
        if 0 <= row <= self._top - self._bottom and 0 <= column < len(self.COLUMNS) and not parent.isValid():
            return self.createIndex(row, column)
        return QModelIndex()

    def row_at(self, position: int) -> RowT | None:
        return self._rows.get(self._top - position) if 0 <= position < self.rowCount() else None

    def loaded_rows(self) -> list[RowT]:
        return [self._rows[seq] for seq in range(self._top, self._bottom - 1, -1)]

    def position_of(self, key: str) -> int | None:
        seq = self._seq_of.get(key)
        return None if seq is None else self._top - seq

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return self._value(self.row_at(index.row()), index.column(), role)

    def multiData(self, index: Index, span: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a view asks of a cell, in one call: Qt 6's delegates ask seven at a time, and each call
        into Python waits for the interpreter lock while background jobs hold it (seven waits a cell made
        a repaint during card making many times slower than on a quiet machine)."""
        # (a span iterates over its QModelRoleData; PySide's stubs do not say so)
        items = (span,) if isinstance(span, QModelRoleData) else cast(Any, span)
        row = self.row_at(index.row()) if index.isValid() else None
        for item in items:
            item.setData(self._value(row, index.column(), item.role()))

    def _value(self, row: RowT | None, column: int, role: int) -> Any:
        if row is None or (role not in self.ROLES and role != Qt.ItemDataRole.UserRole):
            return None
        if role == Qt.ItemDataRole.UserRole:
            return self.row_key(row)
        return self.cell(row, column, role)


def selected_row(view: QTableView, model: LazyTableModel[RowT]) -> RowT | None:
    """The row selected in a single-selection ``view`` of ``model``."""
    rows = view.selectionModel().selectedRows()
    return model.row_at(rows[0].row()) if rows else None


def select_key(view: QTableView, model: LazyTableModel[RowT], key: str) -> bool:
    """Select and reveal the loaded row with ``key``; False if it is not loaded."""
    position = model.position_of(key)
    if position is None:
        return False
    # not view.selectRow: in a multi-selection view it follows the keyboard modifiers held at the time
    index = model.index(position, 0)
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    view.selectionModel().setCurrentIndex(index, flags)
    view.scrollTo(index)
    return True
