"""The lazy table model keeps rows newest first whatever order their updates arrive in."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QModelRoleData, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from san_desktop.ui.common.lazy_model import LazyTableModel


class _Keys(LazyTableModel[str]):
    COLUMNS: tuple[str, ...] = ("Key",)

    def __init__(self, stored: list[str], page_size: int) -> None:
        super().__init__(page_size)
        self.stored = stored

    def fetch_page(self, before_id: str | None, limit: int) -> list[str]:
        older = [key for key in sorted(self.stored, reverse=True) if before_id is None or key < before_id]
        return older[:limit]

    def row_key(self, row: str) -> str:
        return row

    def cell(self, row: str, column: int, role: int) -> Any:
        return row


def _shown(model: _Keys) -> list[str]:
    return [model.row_at(position) or "" for position in range(model.rowCount())]


def test_a_row_made_out_of_order_goes_between_the_loaded_ones(qtbot: QtBot) -> None:
    model = _Keys(["a", "c", "e"], page_size=10)
    model.reload()
    inserted: list[int] = []
    model.rowsInserted.connect(lambda _parent, first, _last: inserted.append(first))
    for key in ("d", "f", "b", "0"):
        model.upsert(key)
    assert _shown(model) == ["f", "e", "d", "c", "b", "a", "0"]  # all loaded: even the oldest comes in
    assert inserted == [1, 0, 4, 6]
    assert [model.position_of(key) for key in ("f", "a", "0")] == [0, 5, 6]
    model.remove("d")
    model.upsert("d")
    assert _shown(model) == ["f", "e", "d", "c", "b", "a", "0"]


def test_a_row_older_than_every_loaded_one_waits_for_scrolling(qtbot: QtBot) -> None:
    model = _Keys(["b", "c", "d", "e"], page_size=2)
    model.reload()
    assert _shown(model) == ["e", "d"]
    model.upsert("a")  # older than what is loaded, and more is still to load: not now
    assert _shown(model) == ["e", "d"]
    model.stored.append("a")
    model.fetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert _shown(model) == ["e", "d", "c", "b", "a"]


def test_many_new_rows_arrive_on_top_in_one_insertion_and_the_others_as_one_each(qtbot: QtBot) -> None:
    """An import adds thousands of jobs: one insertion (one layout and repaint of the view) a batch."""
    model = _Keys(["b", "d"], page_size=10)
    model.reload()
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    model.upsert_many(["g", "c", "e", "f", "d", "f"])  # new on top, one between, one known, one twice
    assert _shown(model) == ["g", "f", "e", "d", "c", "b"]
    assert inserted == [(1, 1), (0, 2)]  # "c" where it belongs, then the three newest at once
    assert [model.position_of(key) for key in ("g", "e", "b")] == [0, 2, 5]
    model.remove("f")
    assert _shown(model) == ["g", "e", "d", "c", "b"]

    empty = _Keys([], page_size=10)
    empty.reload()
    empty.upsert_many(["y", "x", "z"])
    assert _shown(empty) == ["z", "y", "x"]
    empty.upsert("w")  # older than all, and the list is complete: at the bottom
    assert _shown(empty) == ["z", "y", "x", "w"]


class _Deferred:
    """A background that keeps each query until the test delivers it (as a worker would, later)."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Any, Any]] = []

    def __call__(self, query: Any, deliver: Any, _fail: Any) -> None:
        self.waiting.append((query, deliver))

    def deliver_all(self) -> None:
        waiting, self.waiting = self.waiting, []
        for query, deliver in waiting:
            deliver(query())


def test_refresh_keeps_the_rows_until_the_new_ones_arrive_then_says_it_loaded(qtbot: QtBot) -> None:
    model = _Keys(["a", "b"], page_size=10)
    model.reload()
    background = _Deferred()
    loaded: list[int] = []
    model.loaded.connect(lambda: loaded.append(model.rowCount()))
    model.stored.append("c")

    model.refresh(background)
    assert _shown(model) == ["b", "a"]  # no empty moment while the query runs
    loading_meanwhile = model.loading
    background.deliver_all()
    assert loading_meanwhile
    assert _shown(model) == ["c", "b", "a"]
    assert not model.loading
    assert loaded == [3]


def test_a_refresh_that_arrives_after_a_reload_is_dropped(qtbot: QtBot) -> None:
    model = _Keys(["a"], page_size=10)
    model.reload()
    background = _Deferred()
    model.refresh(background)
    model.stored.append("b")
    model.reload()  # newer than the refresh asked for before it
    model.stored.remove("b")
    background.deliver_all()  # reads the store as it is now, but was asked for before the reload
    assert _shown(model) == ["b", "a"]


def test_an_empty_page_still_says_the_list_is_loaded(qtbot: QtBot) -> None:
    model = _Keys([], page_size=10)
    with qtbot.waitSignal(model.loaded, timeout=1_000):
        model.reload()
    assert model.rowCount() == 0


def test_live_answers_are_taken_newest_first_and_never_older_than_a_whole_page(qtbot: QtBot) -> None:
    model = _Keys(["a", "b"], page_size=10)
    model.reload()
    first = model.ask(["b"])
    second = model.ask(["b"])
    model.stored.remove("b")
    assert model.answer(second, "b", None)  # the newest read: b is gone
    assert not model.answer(first, "b", "b")  # an older read answering late is dropped
    assert _shown(model) == ["a"]
    late = model.ask(["c"])
    model.stored.append("c")
    model.reload()  # a whole page asked after that read: it knows at least as much
    assert not model.answer(late, "c", None)
    assert _shown(model) == ["c", "a"]


class _Painted(_Keys):
    COLUMNS = ("Key", "Shout")

    def __init__(self, stored: list[str]) -> None:
        super().__init__(stored, page_size=50)
        self.data_calls = 0
        self.multi_calls = 0

    def cell(self, row: str, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor("red") if row == "b" else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"tip {row}"
        return row if column == 0 else row.upper()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        self.data_calls += 1
        return super().data(index, role)

    def multiData(self, index: QModelIndex | QPersistentModelIndex, span: Any) -> None:
        self.multi_calls += 1
        super().multiData(index, span)


def test_a_painted_cell_is_asked_for_its_roles_in_one_call_with_what_data_answers(qtbot: QtBot) -> None:
    """Each call into Python from a repaint waits for the interpreter lock while jobs run: one a cell."""
    model = _Painted(["a", "b", "c"])
    model.reload()
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(400, 300)
    view.grab()
    assert model.multi_calls >= 6  # (every cell painted: three rows, two columns)
    assert model.data_calls == 0
    for row in range(3):
        for column in range(2):
            index = model.index(row, column)
            for role in (*model.ROLES, Qt.ItemDataRole.UserRole, Qt.ItemDataRole.FontRole):
                asked = QModelRoleData(role)
                model.multiData(index, asked)
                assert asked.data() == model.data(index, role), (row, column, role)
    assert not model.index(3, 0).isValid()
    assert not model.index(0, 2).isValid()
    assert not model.index(-1, 0).isValid()
    assert not model.index(0, 0, model.index(0, 0)).isValid()  # a table: no children
    assert model.index(2, 1).data() == "A"  # newest first
