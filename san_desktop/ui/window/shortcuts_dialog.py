"""Help › Keyboard shortcuts: every key the window answers to, read from its menus' actions (and from the
pages' own shortcuts that describe themselves with ``setWhatsThis``), so the list cannot drift from the
keys."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMenuBar,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from san_desktop.ui.common.look import SPACE_L, SPACE_M
from san_desktop.ui.window.page_actions import declared_shortcuts


@dataclass(frozen=True)
class ShortcutRow:
    group: str  # a menu, or a page
    name: str
    keys: str  # as the platform writes them, several separated by ", "


def plain(text: str) -> str:
    """A menu text without its mnemonic marker and ellipsis ("Se&ttings…" → "Settings")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").rstrip(".")


def _keys(sequences: Iterable[QKeySequence]) -> str:
    return ", ".join(sequence.toString(QKeySequence.SequenceFormat.NativeText) for sequence in sequences)


def menu_rows(menus: Iterable[QMenu]) -> list[ShortcutRow]:
    """A row per action with a shortcut, in menu order (submenus under their parent's name)."""
    rows: list[ShortcutRow] = []

    def walk(menu: QMenu, group: str) -> None:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, group)
            elif not action.isSeparator() and (sequences := declared_shortcuts(action)):
                rows.append(ShortcutRow(group, plain(action.text()), _keys(sequences)))

    for menu in menus:
        walk(menu, plain(menu.title()))
    return rows


def page_rows(pages: Iterable[tuple[str, QWidget]]) -> list[ShortcutRow]:
    """A row per described shortcut (``QShortcut.whatsThis``) of each ``(label, page)``."""
    rows: list[ShortcutRow] = []
    for label, page in pages:
        for shortcut in page.findChildren(QShortcut):
            if shortcut.whatsThis() and not shortcut.key().isEmpty():
                rows.append(ShortcutRow(label, shortcut.whatsThis(), _keys([shortcut.key()])))
    return rows


class ShortcutsDialog(QDialog):
    """The shortcuts in a two-column tree grouped by menu and page. No signals of its own."""

    def __init__(self, rows: list[ShortcutRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = rows
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Command", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        groups: dict[str, QTreeWidgetItem] = {}
        for row in rows:
            group = groups.get(row.group)
            if group is None:
                group = QTreeWidgetItem(self.tree, [row.group])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFirstColumnSpanned(True)
                groups[row.group] = group
            QTreeWidgetItem(group, [row.name, row.keys])
        self.tree.expandAll()
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_L, SPACE_L, SPACE_L, SPACE_M)
        layout.setSpacing(SPACE_M)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)
        rows_height = self.tree.sizeHintForRow(0) * (len(rows) + len(groups)) + header.sizeHint().height()
        self.resize(460, min(640, rows_height + 2 * self.tree.frameWidth() + 120))

    @classmethod
    def of(
        cls, menu_bar: QMenuBar, pages: Iterable[tuple[str, QWidget]], parent: QWidget | None = None
    ) -> ShortcutsDialog:
        """The shortcuts of ``menu_bar``'s menus and of ``(label, page)``'s described ``QShortcut``s."""
        menus = [menu for action in menu_bar.actions() if isinstance(menu := action.menu(), QMenu)]
        return cls(menu_rows(menus) + page_rows(pages), parent)

    def keys_of(self, name: str) -> str | None:
        """The keys listed for the command ``name`` (for tests and the curious)."""
        return next((row.keys for row in self.rows if row.name == name), None)
