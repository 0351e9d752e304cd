"""Capture end to end with the embedded provider: clipboard + Ctrl+Shift+V, drops, rejections."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.settings import load_settings
from san_desktop.queue.records import JobEvent
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.main_window import MainWindow

TEXT = (
    "SQLite WAL mode lets readers continue while a writer commits.\n"
    "A checkpoint moves pages from the write-ahead log back into the database file."
)


def _analysed(event: JobEvent) -> bool:
    return event.job.job_type is JobType.CARD_ANALYSIS and event.new_status is JobStatus.COMPLETED


def _drop(window: MainWindow, mime: QMimeData) -> None:
    """What Qt does when something is dragged over the window and let go."""
    point, action = QPoint(200, 200), Qt.DropAction.CopyAction
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(point, action, mime, buttons, modifiers)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    window.dropEvent(QDropEvent(QPointF(point), action, mime, buttons, modifiers))


def test_clipboard_shortcut_makes_a_scrap_and_then_a_card(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    QGuiApplication.clipboard().setText(TEXT)
    window.activateWindow()
    with qtbot.waitSignal(live_context.runner.job_changed, check_params_cb=_analysed, timeout=20_000):
        with qtbot.waitSignal(window.capture.captured, timeout=5_000) as captured:
            qtbot.keyClick(
                window, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
            )
        scrap_id = captured.args[0].result.scrap_id
        qtbot.waitUntil(lambda: window.inbox.model.position_of(scrap_id) == 0, timeout=5_000)  # in the Inbox
        assert "Scrapped" in window.statusBar().currentMessage()

    def row_shows_card() -> bool:  # the row follows the job's signals (gathered once per tick)
        row = window.inbox.model.row_at(0)
        return row is not None and row.card_title is not None

    qtbot.waitUntil(row_shows_card, timeout=5_000)
    info = window.inbox.model.row_at(0)
    assert info is not None
    detail = live_context.app.cards.get(info.card_id or "")
    assert detail.card.title.startswith("SQLite WAL mode")
    assert detail.card.summary
    tagged = " ".join(detail.card.tags).split()
    assert "SQLite" in tagged  # on its own or in a phrase ("SQLite WAL")
    assert "WAL" in tagged
    assert detail.card.category == "Databases"
    window.inbox.select_scrap(scrap_id)
    window.inbox.table.doubleClicked.emit(window.inbox.model.index(0, 0))
    assert window.current_page_key() == "cards"
    qtbot.waitUntil(lambda: "SQLite WAL mode" in window.cards.detail.toPlainText(), timeout=5_000)


def test_scrapping_the_same_text_twice_makes_one_scrap(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    QGuiApplication.clipboard().setText(TEXT)
    with qtbot.waitSignal(window.capture.captured, timeout=5_000) as first:
        assert window.capture.scrap_clipboard() == 1
    with qtbot.waitSignal(window.capture.captured, timeout=5_000) as second:
        window.capture.scrap_clipboard()
    assert first.args[0].result.created
    assert second.args[0].result.duplicate
    assert second.args[0].result.scrap_id == first.args[0].result.scrap_id
    assert len(live_context.app.scraps.list_scraps()) == 1
    assert "Already scrapped" in window.statusBar().currentMessage()


def test_drops_of_a_file_html_and_a_url_each_make_a_scrap(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    note = tmp_path / "wal.md"
    note.write_text("# WAL\n\nReaders and one writer at the same time.", encoding="utf-8")
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(note))])
    html = QMimeData()
    html.setHtml("<p>Use <b>EXPLAIN QUERY PLAN</b> to check index use.</p>")
    html.setText("Use EXPLAIN QUERY PLAN to check index use.")
    link = QMimeData()
    link.setUrls([QUrl("https://sqlite.org/wal.html")])
    for mime in (files, html, link):
        with qtbot.waitSignal(window.capture.captured, timeout=5_000):
            _drop(window, mime)
    scraps = live_context.app.scraps.list_scraps()
    assert sorted((s.source_type.value, s.source_ref) for s in scraps) == [
        ("FILE", "wal.md"),
        ("HTML", None),
        ("URL", "https://sqlite.org/wal.html"),
    ]


def test_binary_files_and_empty_text_are_refused_with_a_message(
    qtbot: QtBot, window: MainWindow, live_context: AppContext, tmp_path: Path
) -> None:
    binary = tmp_path / "dump.txt"
    binary.write_bytes(bytes(range(256)) * 10)
    files = QMimeData()
    files.setUrls([QUrl.fromLocalFile(str(binary))])
    with qtbot.waitSignal(window.capture.rejected, timeout=5_000) as refused:
        _drop(window, files)
    assert "binary file" in refused.args[0]
    assert "binary file" in window.statusBar().currentMessage()
    assert "binary file" in window.inbox.message.text()

    empty = QMimeData()
    empty.setText("   \n  ")
    with qtbot.waitSignal(window.capture.rejected, timeout=5_000) as refused:
        _drop(window, empty)
    assert "empty" in refused.args[0]
    assert live_context.app.scraps.list_scraps() == []


def test_a_clipboard_holding_nothing_at_all_is_refused_and_can_still_be_watched(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    """CI: Qt has no data (None) for a clipboard cleared or never copied to; watching it crashed."""
    clipboard = QGuiApplication.clipboard()
    clipboard.clear()
    with qtbot.waitSignal(window.capture.rejected, timeout=5_000) as refused:
        assert window.capture.scrap_clipboard() == 0
    assert "clipboard is empty" in refused.args[0]
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_action.setChecked(True)
    with qtbot.waitSignal(window.capture.captured, timeout=5_000):
        clipboard.setText("Paxos needs a majority of acceptors to choose a value.")
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_action.setChecked(False)
    assert [s.content for s in live_context.app.scraps.list_scraps()] == [
        "Paxos needs a majority of acceptors to choose a value."
    ]


def test_clipboard_watcher_is_opt_in_and_skips_repeats(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("copied before watching: never scrapped")
    assert not window.watch_action.isChecked()
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_action.setChecked(True)
    assert live_context.settings.capture.watch_clipboard  # remembered
    with qtbot.waitSignal(window.capture.captured, timeout=5_000):
        clipboard.setText("Kafka consumer groups share partitions between consumers.")
    clipboard.setText("Kafka consumer groups share partitions between consumers.")  # the same again
    window.watch_action.setChecked(False)
    clipboard.setText("copied after watching: never scrapped")
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    contents = [s.content for s in live_context.app.scraps.list_scraps()]
    assert contents == ["Kafka consumer groups share partitions between consumers."]


def test_the_watcher_shows_while_it_watches_and_stops_from_the_status_bar(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    """Issue 24: Watch clipboard had no lasting sign (a passing message, a check mark in a closed menu)."""
    assert not window.watch_indicator.isVisibleTo(window)
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_action.setChecked(True)
    assert window.watch_indicator.isVisibleTo(window)
    assert window.watch_indicator.label.text() == "Watching the clipboard"
    window.statusBar().showMessage("Something else happened.")  # a passing message does not hide it
    assert window.watch_indicator.isVisibleTo(window)
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_indicator.stop_button.click()
    assert not window.watch_action.isChecked()
    assert not window.watch_indicator.isVisibleTo(window)
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)  # (the change told may be another's)
    assert not live_context.settings.capture.watch_clipboard  # remembered


def test_the_watcher_remembers_the_last_of_quick_toggles(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    """The second toggle was compared with settings the first had not saved yet, and was lost (CI seed 20533)."""
    window.watch_action.setChecked(True)
    window.watch_action.setChecked(False)
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    assert _watch_remembered(live_context) == (False, False)
    window.watch_action.setChecked(True)
    window.watch_action.setChecked(False)
    window.watch_action.setChecked(True)
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    assert _watch_remembered(live_context) == (True, True)


def _watch_remembered(context: AppContext) -> tuple[bool, bool]:
    """Watching the clipboard: in the settings in use, and in the file."""
    return context.settings.capture.watch_clipboard, load_settings(context.app.data_dir).capture.watch_clipboard


def test_the_watcher_skips_short_copies_and_scrap_clipboard_still_takes_them(
    qtbot: QtBot, window: MainWindow, live_context: AppContext
) -> None:
    """Issue 24: a copied "ok" became a card."""
    clipboard = QGuiApplication.clipboard()
    with qtbot.waitSignal(live_context.hub.changed, timeout=5_000):
        window.watch_action.setChecked(True)
    clipboard.setText("ok")
    clipboard.setText("  a word  ")
    with qtbot.waitSignal(window.capture.captured, timeout=5_000):
        clipboard.setText("Raft elects a leader that replicates the log.")
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    contents = [s.content for s in live_context.app.scraps.list_scraps()]
    assert contents == ["Raft elects a leader that replicates the log."]
    with qtbot.waitSignal(window.capture.captured, timeout=5_000):
        clipboard.setText("https://a.io/x")  # a link is never too short
    with qtbot.waitSignal(window.capture.captured, timeout=5_000):
        window.watch_action.setChecked(False)
        clipboard.setText("ok")
        window.scrap_action.trigger()  # asked for: scrapped, however short
    qtbot.waitUntil(lambda: not live_context.ops.busy, timeout=5_000)
    assert "ok" in [s.content for s in live_context.app.scraps.list_scraps()]
