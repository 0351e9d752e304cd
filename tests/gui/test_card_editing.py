"""Correcting a card in the Cards page (issue 24): the edit dialog (all four fields, a tag renamed on every
card, a refusal that keeps what was typed), Undo, "Analyse again" asking before it replaces edits, similar
cards following a new summary, the TIL page saying the day's cards changed, and the detail pane following
the search (issue 24, item 6)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from san_desktop.app import SanApp
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.services.card_edits import CardEdit
from san_desktop.services.cards import CardSummary
from san_desktop.ui.cards.edit_dialog import CardEditDialog
from san_desktop.ui.cards.page import CardsPage
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.lazy_model import select_key
from san_desktop.ui.til.page import TilPage
from tests.support.cards_page import first_read
from tests.support.dialogs import close_next_modal
from tests.support.jobs import jobs_of

pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")

DOCKER = "Docker multi-stage builds keep images small: build in one stage, copy the binary out."
WAL = "SQLite WAL mode lets readers continue while a writer commits. Checkpoints copy pages back."
WAL2 = "Write-ahead logging in SQLite: a checkpoint moves WAL pages into the database file."
PIE = "Grandma's apple pie needs butter, flour, apples and cinnamon."
WAIT = 20_000


@pytest.fixture
def started(qtbot: QtBot, live_context: AppContext) -> AppContext:
    """The window's context with the product's processors running (re-embeddings, analyses)."""
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    return live_context


def cards_of(qtbot: QtBot, app: SanApp, texts: Sequence[str]) -> None:
    """Cards made from ``texts`` by the running job runner."""
    for text in texts:
        app.capture_text(text)
    qtbot.waitUntil(lambda: len(app.cards.list_cards()) == len(texts) and _settled(app), timeout=WAIT)


def _settled(app: SanApp) -> bool:
    """No card analysis or re-embedding waits or runs."""
    return not jobs_of(app.queue, JobType.CARD_ANALYSIS, statuses=(JobStatus.PENDING, JobStatus.PROCESSING))


def _card(app: SanApp, text: str) -> CardSummary:
    (card,) = [card for card in app.cards.list_cards() if app.cards.get(card.id).content == text]
    return card


def _page(qtbot: QtBot, context: AppContext, shown: CardSummary | None = None) -> CardsPage:
    page = CardsPage(context)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    first_read(qtbot, page)
    if shown is not None:
        assert select_key(page.table, page.model, shown.id)
        qtbot.waitUntil(lambda: page.current is not None and page.current.id == shown.id, timeout=WAIT)
    return page


def _open_dialog(qtbot: QtBot, page: CardsPage) -> CardEditDialog:
    page.editor.edit_button.click()
    qtbot.waitUntil(lambda: page.editor.dialog is not None and page.editor.dialog.isVisible(), timeout=WAIT)
    assert page.editor.dialog is not None
    return page.editor.dialog


def _save(dialog: CardEditDialog) -> None:
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert save is not None
    save.click()


def _row_title(page: CardsPage, card_id: str) -> str | None:
    position = page.model.position_of(card_id)
    row = page.model.row_at(position) if position is not None else None
    return row.title if row is not None else None


# --- the dialog ---------------------------------------------------------------------------------------


def test_an_edit_of_all_four_fields_shows_in_the_list_and_the_detail_and_undo_takes_it_back(
    qtbot: QtBot, started: AppContext
) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    dialog = _open_dialog(qtbot, page)
    assert dialog.title.text() == docker.title
    assert dialog.category.currentText() == docker.category

    dialog.title.setText("Docker layer cache")
    dialog.summary.setPlainText("Layers that did not change are reused: copy what changes often last.")
    dialog.tags.setText("Docker, build cache")
    dialog.category.setCurrentText("Architecture/Design")
    _save(dialog)

    qtbot.waitUntil(lambda: _row_title(page, docker.id) == "Docker layer cache", timeout=WAIT)
    qtbot.waitUntil(
        lambda: "Edited by you: title, summary, tags and category" in page.detail.toPlainText(), timeout=WAIT
    )
    detail = page.detail.toPlainText()
    assert "Layers that did not change are reused" in detail
    assert "Architecture/Design" in detail
    assert "#build cache" in detail
    assert page.editor.dialog is None  # closed once stored
    assert "Undo" in page.message.text()
    assert app.cards.get(docker.id).card.edited == ("title", "summary", "tags", "category")

    page.message.linkActivated.emit("undo-edit")  # the link "Undo" clicked
    qtbot.waitUntil(lambda: _row_title(page, docker.id) == docker.title, timeout=WAIT)
    qtbot.waitUntil(lambda: "Edited by you" not in page.detail.toPlainText(), timeout=WAIT)
    assert app.cards.get(docker.id).card == docker


def test_a_refused_edit_keeps_the_dialog_open_with_what_was_typed(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    dialog = _open_dialog(qtbot, page)
    dialog.tags.setText("a, b, c, d, e, f")
    dialog.summary.setPlainText("A summary worth keeping.")
    _save(dialog)
    qtbot.waitUntil(lambda: "at most 5 tags" in dialog.status.text(), timeout=WAIT)
    assert dialog.isVisible()
    assert dialog.summary.toPlainText() == "A summary worth keeping."
    assert "Error" not in dialog.status.text()
    assert app.cards.get(docker.id).card == docker


def test_the_card_deleted_while_the_dialog_is_open_is_said_and_the_text_stays(
    qtbot: QtBot, started: AppContext
) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    dialog = _open_dialog(qtbot, page)
    dialog.title.setText("Docker layer cache")
    app.delete_scrap(docker.scrap_id)  # the command line, meanwhile
    _save(dialog)
    qtbot.waitUntil(lambda: "There is no card" in dialog.status.text(), timeout=WAIT)
    assert dialog.isVisible()
    assert dialog.title.text() == "Docker layer cache"


def test_renaming_a_tag_in_the_dialog_offers_to_rename_it_on_every_card(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [WAL, WAL2])
    wal, wal2 = _card(app, WAL), _card(app, WAL2)
    app.edit_card(wal2.id, CardEdit(tags=("SQLite", "SQLite WAL")))  # "SQLite WAL" on both cards now
    page = _page(qtbot, started, wal)
    dialog = _open_dialog(qtbot, page)
    assert not dialog.renames  # nothing renamed yet: nothing offered

    dialog.tags.setText(dialog.tags.text().replace("SQLite WAL", "SQLite"))

    (offer,) = dialog.renames
    assert offer.text() == "Rename “SQLite WAL” to “SQLite” on the 1 other card that has it too"
    assert offer.isChecked()
    _save(dialog)
    qtbot.waitUntil(lambda: page.editor.dialog is None, timeout=WAIT)
    assert "SQLite WAL" not in app.cards.get(wal2.id).card.tags
    assert "SQLite WAL" not in app.cards.get(wal.id).card.tags
    assert "and 1 other card" in page.message.text()


def test_a_tag_renamed_only_here_leaves_the_other_cards(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [WAL, WAL2])
    wal, wal2 = _card(app, WAL), _card(app, WAL2)
    app.edit_card(wal2.id, CardEdit(tags=("SQLite", "SQLite WAL")))
    page = _page(qtbot, started, wal)
    dialog = _open_dialog(qtbot, page)
    dialog.tags.setText(dialog.tags.text().replace("SQLite WAL", "WAL mode"))
    (offer,) = dialog.renames
    offer.setChecked(False)
    _save(dialog)
    qtbot.waitUntil(lambda: page.editor.dialog is None, timeout=WAIT)
    assert "WAL mode" in app.cards.get(wal.id).card.tags
    assert app.cards.get(wal2.id).card.tags == ("SQLite", "SQLite WAL")


# --- analysing again ------------------------------------------------------------------------------------


def test_analyse_again_asks_about_the_edits_and_declining_keeps_them(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    app.edit_card(docker.id, CardEdit(title="Docker layer cache", tags=("Docker", "cache")))
    page = _page(qtbot, started, docker)
    qtbot.waitUntil(lambda: _settled(app), timeout=WAIT)  # its new vector
    asked: list[CardSummary] = []

    def keep(card: CardSummary) -> str | None:
        asked.append(card)
        return "keep"

    page.editor.ask_about_edits = keep
    page.editor.analyse_button.click()

    qtbot.waitUntil(lambda: "analysed again" in page.message.text(), timeout=WAIT)
    assert [card.edited for card in asked] == [("title", "tags")]
    qtbot.waitUntil(lambda: _settled(app), timeout=WAIT)
    card = app.cards.get(docker.id).card
    assert (card.title, card.tags) == ("Docker layer cache", ("cache", "Docker"))
    assert _row_title(page, docker.id) == "Docker layer cache"


def test_the_question_before_analysing_again_offers_keep_replace_and_cancel(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    app.edit_card(docker.id, CardEdit(title="Docker layer cache"))
    page = _page(qtbot, started, docker)
    current = page.current
    assert current is not None
    seen: list[str] = []

    def answer(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        buttons = {button.text(): button for button in box.findChildren(QPushButton)}
        assert {"Keep my edits", "Replace them", "Cancel"} <= set(buttons)
        buttons["Replace them"].click()

    close_next_modal(answer)
    assert page.editor.ask_about_edits(current) == "replace"
    assert "You edited its title" in seen[0]
    close_next_modal()  # closed without an answer
    assert page.editor.ask_about_edits(current) is None
    assert QApplication.activeModalWidget() is None


def test_analyse_again_without_edits_asks_nothing(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    page.editor.ask_about_edits = lambda card: pytest.fail("asked about edits of a card without any")
    page.editor.analyse_button.click()
    qtbot.waitUntil(lambda: "analysed again" in page.message.text(), timeout=WAIT)


# --- similar cards, the TIL page, other processes -----------------------------------------------------------


def test_a_new_summary_changes_the_similar_cards_shown(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL, WAL2, PIE])
    pie, wal, wal2 = _card(app, PIE), _card(app, WAL), _card(app, WAL2)
    page = _page(qtbot, started, pie)
    qtbot.waitUntil(lambda: page.similar.count() > 0, timeout=WAIT)
    assert page.similar_label.text() == "Nothing close — the nearest cards:"

    dialog = _open_dialog(qtbot, page)
    dialog.summary.setPlainText(
        "SQLite write-ahead logging: readers go on while a writer commits; checkpoints copy pages."
    )
    _save(dialog)

    def nearest_two() -> set[str]:
        return {page.similar.item(row).text().split("   (")[0] for row in range(min(2, page.similar.count()))}

    def best_score() -> int:
        return int(page.similar.item(0).text().rsplit("(", 1)[1].split("%")[0])

    before = best_score()
    qtbot.waitUntil(lambda: best_score() > before, timeout=WAIT)  # once re-embedded
    assert nearest_two() == {wal.title, wal2.title}


def test_the_til_page_says_the_days_cards_changed_after_an_edit(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL])
    day = app.til.today()
    app.generate_til(day)
    til = TilPage(started)
    qtbot.addWidget(til)
    til.show()
    qtbot.waitUntil(lambda: "Version 1" in til.state.text(), timeout=WAIT)
    assert til.notice.text() == ""
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)

    dialog = _open_dialog(qtbot, page)
    dialog.category.setCurrentText("Architecture/Design")
    _save(dialog)

    qtbot.waitUntil(lambda: "Inputs changed" in til.notice.text(), timeout=WAIT)


def test_an_edit_from_the_command_line_shows_in_the_open_page(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    SanApp(app.backend).edit_card(docker.id, CardEdit(title="Docker layer cache"))  # another process's facade
    qtbot.waitUntil(lambda: _row_title(page, docker.id) == "Docker layer cache", timeout=WAIT)
    qtbot.waitUntil(lambda: "Docker layer cache" in page.detail.toPlainText(), timeout=WAIT)


# --- the detail pane follows the search (item 6) -----------------------------------------------------------


def test_a_search_that_leaves_the_shown_card_out_empties_the_detail(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL])
    docker, wal = _card(app, DOCKER), _card(app, WAL)
    page = _page(qtbot, started, docker)
    assert docker.title in page.detail.toPlainText()

    page.search.setText("sqlite")
    qtbot.waitUntil(lambda: page.model.rowCount() == 1 and page.model.position_of(wal.id) == 0, timeout=WAIT)
    qtbot.waitUntil(lambda: page.detail.toPlainText() == "", timeout=WAIT)
    assert page.similar.count() == 0
    assert page.current is None
    assert not page.editor.edit_button.isEnabled()


def test_a_search_that_keeps_the_shown_card_keeps_it_selected(qtbot: QtBot, started: AppContext) -> None:
    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    page.search.setText("docker")
    qtbot.waitUntil(lambda: page.model.rowCount() == 1, timeout=WAIT)
    qtbot.waitUntil(lambda: page.table.selectionModel().isRowSelected(0), timeout=WAIT)
    assert docker.title in page.detail.toPlainText()
    assert page.editor.edit_button.isEnabled()


def test_f2_edits_the_card_shown_and_help_lists_it(qtbot: QtBot, started: AppContext) -> None:
    from san_desktop.ui.window.shortcuts_dialog import page_rows

    app = started.app
    cards_of(qtbot, app, [DOCKER])
    page = _page(qtbot, started, _card(app, DOCKER))
    page.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is page, timeout=5_000)
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: page.editor.dialog is not None and page.editor.dialog.isVisible(), timeout=WAIT)
    assert ("Cards", "Edit the card shown", "F2") in {(r.group, r.name, r.keys) for r in page_rows([("Cards", page)])}


def test_the_inbox_row_shows_the_edited_title(qtbot: QtBot, started: AppContext) -> None:
    from san_desktop.ui.inbox.page import InboxPage

    app = started.app
    cards_of(qtbot, app, [DOCKER])
    docker = _card(app, DOCKER)
    inbox = InboxPage(started)
    qtbot.addWidget(inbox)
    assert inbox.select_scrap(docker.scrap_id)
    page = _page(qtbot, started, docker)
    dialog = _open_dialog(qtbot, page)
    dialog.title.setText("Docker layer cache")
    _save(dialog)

    def inbox_title() -> str | None:
        selected = inbox.selected_scrap()
        return selected.card_title if selected is not None else None

    qtbot.waitUntil(lambda: inbox_title() == "Docker layer cache", timeout=WAIT)


def test_acceptance_an_edit_of_all_four_fields_shows_everywhere_and_survives_analyse_again(
    qtbot: QtBot, started: AppContext
) -> None:
    """Issue 24's acceptance: the edit is in the Cards page, in `san cards show`, in a TIL made afterwards,
    and still there after Analyse again (asked, declined)."""
    import json

    from tests.support.processes import run_san
    from tests.support.til import til_text

    app = started.app
    cards_of(qtbot, app, [DOCKER, WAL])
    docker = _card(app, DOCKER)
    page = _page(qtbot, started, docker)
    dialog = _open_dialog(qtbot, page)
    dialog.title.setText("Docker layer cache")
    dialog.summary.setPlainText("Layers that did not change are reused: copy what changes often last.")
    dialog.tags.setText("Docker, build cache")
    dialog.category.setCurrentText("Architecture/Design")
    _save(dialog)
    qtbot.waitUntil(
        lambda: "Edited by you: title, summary, tags and category" in page.detail.toPlainText(), timeout=WAIT
    )
    qtbot.waitUntil(lambda: _settled(app), timeout=WAIT)  # its new vector

    shown = run_san("cards", "show", docker.id, "--json")
    assert shown.returncode == 0, shown.stderr
    card = json.loads(shown.stdout)["card"]
    assert (card["title"], card["category"], card["tags"], card["edited"]) == (
        "Docker layer cache",
        "Architecture/Design",
        ["build cache", "Docker"],
        ["title", "summary", "tags", "category"],
    )

    day = app.til.today()
    app.generate_til(day)
    qtbot.waitUntil(lambda: app.til.get(day).markdown is not None and _settled(app), timeout=WAIT)
    section = til_text(app, day).split("## Architecture/Design", 1)[1].split("\n## ", 1)[0]
    assert "### Docker layer cache" in section
    assert "Layers that did not change are reused" in section
    assert "`#build cache`" in section

    asked: list[tuple[str, ...]] = []

    def decline(shown_card: CardSummary) -> str:
        asked.append(shown_card.edited)
        return "keep"  # keep my edits: the analysis may not replace them

    page.editor.ask_about_edits = decline
    page.editor.analyse_button.click()
    qtbot.waitUntil(lambda: "analysed again" in page.message.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: _settled(app), timeout=WAIT)
    assert asked == [("title", "summary", "tags", "category")]
    after = app.cards.get(docker.id).card
    assert (after.title, after.category, after.tags) == (
        "Docker layer cache",
        "Architecture/Design",
        ("build cache", "Docker"),
    )
    assert _row_title(page, docker.id) == "Docker layer cache"
