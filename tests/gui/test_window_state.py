"""The window's look and keys: the page icons follow the palette, the window comes back as it was left,
Ctrl+, opens Settings, Ctrl+F / F5 / Delete reach the page shown, every key is listed in Help, and the data
folder's path is shown when nothing can open it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtGui import QColor, QGuiApplication, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QLineEdit, QSplitter, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.settings import SETTINGS_FILE, Settings, WindowSettings, with_value
from san_desktop.ui.common import folder_dialog as folder_dialog
from san_desktop.ui.common.context import AppContext, build_context
from san_desktop.ui.common.resources import tinted_pixmap
from san_desktop.ui.main_window import PAGES, MainWindow
from san_desktop.ui.settings.dialog import SettingsDialog
from san_desktop.ui.window.navigation import NavigationList
from san_desktop.ui.window.window_state import decode_splitters, encode_splitters
from tests.support.dialogs import close_next_modal

# Offscreen windows cannot be raised or have their size hints passed on; Qt says so as a warning.
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints", "systemTrayWindowChanged", "does not support raise")


def _active_window(qtbot: QtBot, context: AppContext) -> MainWindow:
    window = MainWindow(context)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)  # its keys are window-wide
    return window


class _StubPage(QWidget):
    """A page with the three methods the window's keys call, counting the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.search = QLineEdit()
        QVBoxLayout(self).addWidget(self.search)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def focus_search(self) -> None:
        self.calls.append("focus_search")
        self.search.setFocus()

    def refresh_page(self) -> None:
        self.calls.append("refresh_page")

    def delete_selected(self) -> None:
        self.calls.append("delete_selected")


def _show_stub(qtbot: QtBot, window: MainWindow, page: QWidget) -> None:
    window.pages.setCurrentIndex(window.pages.addWidget(page))
    window.page_actions.page_changed()
    page.setFocus()
    qtbot.waitUntil(page.hasFocus, timeout=5_000)


# --- look -------------------------------------------------------------------------------------------


def test_every_page_has_an_icon_drawn_in_the_palettes_text_colour(qtbot: QtBot) -> None:
    navigation = NavigationList()
    qtbot.addWidget(navigation)
    for key, label, _description in PAGES:
        navigation.add_page(key, label, f"page-{key}")
    dark = QPalette(navigation.palette())
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#f0f0f0"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    navigation.setPalette(dark)  # what a switch to the system's dark palette does to the widget

    for row in range(navigation.count()):
        pixmap = navigation.item(row).icon().pixmap(QSize(20, 20), 2.0)
        assert not pixmap.isNull(), navigation.item(row).text()
        image = pixmap.toImage()
        opaque = [
            image.pixelColor(x, y)
            for x in range(image.width())
            for y in range(image.height())
            if image.pixelColor(x, y).alpha() == 255
        ]
        assert opaque, navigation.item(row).text()
        assert all(colour.name() == "#f0f0f0" for colour in opaque)


def test_icons_are_drawn_at_the_screens_pixel_density(qtbot: QtBot) -> None:
    pixmap = tinted_pixmap("page-stars", QSize(20, 20), QColor("red"), 2.0)
    assert pixmap.size() == QSize(40, 40)  # device pixels: not a 20 px drawing scaled up
    assert pixmap.devicePixelRatio() == 2.0


# --- remembered state ----------------------------------------------------------------------------


def test_splitter_sizes_are_written_readably_and_read_back() -> None:
    sizes = {"cards.splitter0": [300, 700], "jobs.splitter1": [120, 0, 40]}
    text = encode_splitters(sizes)
    assert text == "cards.splitter0=300,700;jobs.splitter1=120,0,40"
    assert decode_splitters(text) == sizes
    assert decode_splitters("cards.a=1,x;cards.b=2,3") == {"cards.b": [2, 3]}
    settings = with_value(Settings(), "window", "splitters", text)
    assert settings.window.splitters == text
    with pytest.raises(ValueError, match=r"window\.splitters must be name=size"):
        WindowSettings(splitters="cards.splitter0=wide")
    with pytest.raises(ValueError, match=r"window\.last_page must be a page name"):
        WindowSettings(last_page="../Inbox")


def _cards_splitter(window: MainWindow) -> QSplitter:
    splitters = window.page("cards").findChildren(QSplitter)
    assert splitters
    return splitters[0]


def test_size_splitters_and_page_survive_a_restart(qtbot: QtBot, context: AppContext, data_dir: Path) -> None:
    window = _active_window(qtbot, context)
    window.resize(720, 510)  # within the offscreen screen (800×600), where Qt keeps a restored window
    window.show_page("cards")
    splitter = _cards_splitter(window)
    qtbot.waitUntil(lambda: sum(splitter.sizes()) > 0, timeout=5_000)
    total = sum(splitter.sizes())
    splitter.setSizes([total // 4, total - total // 4])
    chosen = splitter.sizes()
    window.show_page("stars")
    with qtbot.waitSignal(window.shut_down, timeout=10_000):
        window.close()

    saved = json.loads((data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))["window"]
    assert saved["last_page"] == "stars"
    assert saved["geometry"]
    name = splitter.property("remembered_as")
    assert isinstance(name, str)
    assert name.startswith("cards.")
    assert f"{name}={chosen[0]},{chosen[1]}" in saved["splitters"].split(";")

    again = SanApp(start_backend(data_dir, kind="gui", log_to_stderr=False))
    context_again = build_context(again)
    reopened = MainWindow(context_again)
    qtbot.addWidget(reopened)
    reopened.show()
    qtbot.waitExposed(reopened)
    try:
        assert reopened.size() == QSize(720, 510)
        assert reopened.current_page_key() == "stars"
        assert reopened.pages.currentWidget() is reopened.page("stars")
        reopened.show_page("cards")
        splitter_again = _cards_splitter(reopened)
        qtbot.waitUntil(lambda: splitter_again.sizes() == chosen, timeout=5_000)
    finally:
        with qtbot.waitSignal(reopened.shut_down, timeout=10_000):
            reopened.close()
        for item in (context_again.hub, context_again.ops, context_again.runner):
            item.deleteLater()


def test_a_first_start_opens_on_the_inbox_at_the_default_size(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    assert context.settings.window == WindowSettings()
    assert window.current_page_key() == "inbox"


# --- keys --------------------------------------------------------------------------------------------


def test_ctrl_comma_opens_settings(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    assert QKeySequence("Ctrl+,") in window.settings_action.shortcuts()  # on Linux too, where Preferences is none
    shown = close_next_modal()
    qtbot.keyClick(window.navigation, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)  # returns once closed
    assert len(shown) == 1
    assert isinstance(shown[0], SettingsDialog)
    assert window.settings_dialog is None


def test_f5_ctrl_f_and_delete_reach_the_page_shown(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    page = _StubPage()
    _show_stub(qtbot, window, page)

    qtbot.keyClick(page, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: page.calls == ["refresh_page"], timeout=5_000)
    qtbot.keyClick(page, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: page.calls == ["refresh_page", "delete_selected"], timeout=5_000)
    qtbot.keyClick(page, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: page.search.hasFocus(), timeout=5_000)
    assert page.calls == ["refresh_page", "delete_selected", "focus_search"]

    page.search.setText("abc")
    page.search.setCursorPosition(0)
    qtbot.keyClick(page.search, Qt.Key.Key_Delete)  # in a text field the key edits the text
    assert page.search.text() == "bc"
    assert page.calls == ["refresh_page", "delete_selected", "focus_search"]


class _NothingToSearch(QWidget):
    def focus_search(self) -> bool:
        return False


@pytest.mark.parametrize("page_type", [QWidget, _NothingToSearch])
def test_a_page_without_search_says_so(qtbot: QtBot, context: AppContext, page_type: type[QWidget]) -> None:
    window = _active_window(qtbot, context)
    page = page_type()
    page.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    _show_stub(qtbot, window, page)
    qtbot.keyClick(page, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Nothing to search on this page.", timeout=5_000)


def test_a_page_that_binds_a_key_itself_keeps_it(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    page = _StubPage()
    own: list[str] = []
    QShortcut(QKeySequence.StandardKey.Delete, page, lambda: own.append("page"))
    _show_stub(qtbot, window, page)
    qtbot.keyClick(page, Qt.Key.Key_Delete)  # once, by the page: never "ambiguous", never twice
    qtbot.waitUntil(lambda: own == ["page"], timeout=5_000)
    assert page.calls == []

    window.show_page("cards")  # the window's Delete is back on the other pages
    assert QKeySequence("Del") in window.page_actions.delete.shortcuts()


def test_help_lists_every_shortcut_from_the_actions(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    dialog = window.make_shortcuts_dialog()
    qtbot.addWidget(dialog)

    def native(text: str) -> str:
        return QKeySequence(text).toString(QKeySequence.SequenceFormat.NativeText)

    assert native("Ctrl+,") in (dialog.keys_of("Settings") or "")
    assert dialog.keys_of("Find on this page") == native("Ctrl+F")
    assert dialog.keys_of("Refresh this page") == native("F5")
    assert native("Del") in (dialog.keys_of("Delete selected") or "")
    assert dialog.keys_of("Scrap clipboard") == native("Ctrl+Shift+V")
    # the pages' own keys, described where they are made
    assert dialog.keys_of("Newer day") == native("Alt+Up")
    assert dialog.keys_of("Show the answer") == native("Space")
    assert dialog.keys_of("Rate the answer: Good") == native("3")
    assert dialog.keys_of("Retry the selected jobs") == native("Ctrl+R")
    assert dialog.keys_of("Not interested in the selected repository") == native("Del")
    for number, (_key, label, _description) in enumerate(PAGES, start=1):
        assert dialog.keys_of(label) == native(f"Ctrl+{number}")


# --- the data folder ----------------------------------------------------------------------------------


class _NoFileManager:
    opened: ClassVar[list[QUrl]] = []

    @staticmethod
    def openUrl(url: QUrl) -> bool:
        _NoFileManager.opened.append(url)
        return False


def test_open_data_folder_shows_the_path_when_nothing_can_open_it(
    qtbot: QtBot, context: AppContext, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_dialog, "QDesktopServices", _NoFileManager)
    window = _active_window(qtbot, context)
    window.open_data_action.trigger()
    qtbot.waitUntil(lambda: window.folder_dialog is not None and window.folder_dialog.isVisible(), timeout=5_000)
    dialog = window.folder_dialog
    assert dialog is not None
    assert _NoFileManager.opened[-1] == QUrl.fromLocalFile(str(data_dir))
    assert dialog.path.text() == str(data_dir)
    assert dialog.path.isReadOnly()
    assert dialog.path.selectedText() == str(data_dir)
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == str(data_dir)
    assert dialog.copy_button.text() == "Copied"
    dialog.reject()


def test_open_data_folder_shows_nothing_more_when_a_file_manager_opens_it(
    qtbot: QtBot, context: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[QUrl] = []

    class FileManager:
        @staticmethod
        def openUrl(url: QUrl) -> bool:
            opened.append(url)
            return True

    monkeypatch.setattr(folder_dialog, "QDesktopServices", FileManager)
    window = _active_window(qtbot, context)
    window.open_data_action.trigger()
    assert len(opened) == 1
    assert window.folder_dialog is None


def test_the_inbox_welcome_offers_set_up_and_opens_settings_at_its_section(qtbot: QtBot, context: AppContext) -> None:
    window = _active_window(qtbot, context)
    window.show_page("inbox")
    offers = window.inbox.states.message.buttons
    qtbot.waitUntil(lambda: "ai" in offers and not offers["ai"].isHidden(), timeout=5_000)  # offered, not forced
    assert window.settings_dialog is None
    focused: list[QWidget | None] = []

    def look(dialog: QWidget) -> None:
        assert isinstance(dialog, SettingsDialog)
        focused.append(dialog.focusWidget())
        focused.append(dialog.provider)

    close_next_modal(look)
    qtbot.mouseClick(offers["ai"], Qt.MouseButton.LeftButton)  # returns once the dialog is closed
    assert len(focused) == 2
    assert focused[0] is focused[1]  # the AI section's first field has the cursor
