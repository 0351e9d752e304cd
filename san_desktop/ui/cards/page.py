from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.errors import SanError
from san_desktop.ui.cards.card_list import CardListModel, card_html, similar_label
from san_desktop.ui.cards.editing import UNDO_LINK, CardEditor
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.empty_state import StateStack
from san_desktop.ui.common.lazy_model import select_key, selected_row
from san_desktop.ui.common.ops import NewestPerItem
from san_desktop.ui.common.table_fit import Column, ColumnFitter, WordElideDelegate

if TYPE_CHECKING:  # numpy comes with them: they load with the page's first read, after the first frame
    from san_desktop.services.cards import CardDetail, CardSummary, FoundTil, SimilarCard

__all__ = ["CardListModel", "CardsPage", "card_html", "similar_label"]  # where tests and the window find them

TITLE, CATEGORY, TAGS = range(3)
MESSAGE_MS = 30_000  # "Deleted … Undo" stays this long
TIL_MATCHES = 5  # days named under the search box
NO_CARDS = (
    "Each scrap you capture becomes a card — a title, a summary, tags and a category — made on this "
    "computer. Scrap something in the Inbox and its card appears here a moment later."
)


class CardsPage(QWidget):
    """Cards with text search, the selected card in full, and its similar cards (click to open); live
    by the change hub. Delete deletes the selected card's scrap (and so the card), with Undo; Edit… (F2,
    or a double click) corrects the card shown, with Undo; Analyse again asks first whether to keep what
    the person edited. When there is no card, or none matches the search, the list says so and what to
    do; a card the search leaves out is not shown either. Under the search box, the days whose TIL note
    the search finds too (by words or meaning), each a link.

    Signals:
      open_til(str): a day whose TIL note the search found was clicked (its date).
    """

    open_til = Signal(str)

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._shown: str | None = None  # the card whose detail is (being) shown
        self._last_deleted: str | None = None  # the scrap of the card deleted last (Undo brings it back)
        self._reveal: str | None = None  # select this scrap's card when it appears (after Undo)
        self._card_reads = NewestPerItem(context.ops)  # rows read again after a change
        # pages of cards are read off the GUI thread: the page is not the one shown at start, and its
        # first read (with the card service's import of numpy) was a tenth of a second of the window's start
        self.model = CardListModel(lambda: context.app.cards, background=self._read_in_background)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search cards, the text of their scraps, and by meaning (English or 한국어)")
        self.search.setClearButtonEnabled(True)
        self.til_matches = QLabel()
        self.til_matches.setWordWrap(True)
        self.til_matches.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.til_matches.setVisible(False)
        self._til_search = ""  # the search the TIL links were read for
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.elide = WordElideDelegate(self.table)
        self.table.setItemDelegateForColumn(TITLE, self.elide)
        self.table.setItemDelegateForColumn(CATEGORY, self.elide)
        self.table.setItemDelegateForColumn(TAGS, self.elide)
        self.columns = ColumnFitter(
            self.table,
            # the category keeps the width of a middling one ("Programming…" for a longer one)
            {TITLE: Column(0.58, 120), CATEGORY: Column(sample="Data Engineering"), TAGS: Column(0.42, 80)},
        )
        self.states = StateStack(self.table)
        self.editor = CardEditor(context, self.say, self)
        self.edit_key = QShortcut(QKeySequence(Qt.Key.Key_F2), self)
        self.edit_key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.edit_key.setWhatsThis("Edit the card shown")  # listed in Help
        self.delete_button = QPushButton("Delete")
        self.delete_button.setToolTip("Delete the selected card and the scrap it was made from (Delete)")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.message.setVisible(False)
        self.detail = QTextBrowser()
        self.detail.setPlaceholderText("Select a card.")
        self.similar = QListWidget()
        self.similar_label = QLabel("Similar cards")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search)
        left_layout.addWidget(self.til_matches)
        left_layout.addWidget(self.states, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.detail, 3)
        right_layout.addWidget(self.similar_label)
        right_layout.addWidget(self.similar, 1)
        self.splitter = QSplitter()
        self.splitter.setObjectName("list_detail")  # its sizes are remembered under this name
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)

        heading = QHBoxLayout()
        heading.addWidget(QLabel("<h2>Cards</h2>"))
        heading.addStretch(1)
        heading.addWidget(self.editor.edit_button)
        heading.addWidget(self.editor.analyse_button)
        heading.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.addLayout(heading)
        layout.addWidget(self.message)
        layout.addWidget(self.splitter, 1)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._on_message_timer_timeout)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        self.table.doubleClicked.connect(lambda _index: self.editor.edit())
        self.edit_key.activated.connect(self.editor.edit)
        self.similar.itemActivated.connect(self._on_similar_item_activated)
        self.similar.itemClicked.connect(self._on_similar_item_activated)
        self.delete_button.clicked.connect(self.delete_selected)
        self.message.linkActivated.connect(self._on_message_link_activated)
        self.til_matches.linkActivated.connect(self._on_til_matches_link_activated)
        self.states.message.action_triggered.connect(self._on_states_action_triggered)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved, self.model.loaded):
            signal.connect(self._update_state)
        self.model.loaded.connect(self._follow_search)
        context.hub.changed.connect(self._on_hub_changed)
        self.model.reload()
        self._update_state()

    def _read_in_background(
        self,
        call: Callable[[], list[CardSummary]],
        done: Callable[[list[CardSummary]], None],
        failed: Callable[[Exception], None],
    ) -> None:
        def refused(exc: SanError) -> None:
            self._context.hub.message.emit(str(exc))  # the status bar says why the list stays as it is
            failed(exc)

        self._context.ops.run(call, done, refused)

    @property
    def current(self) -> CardSummary | None:
        """The card whose detail is shown (what Edit… and Analyse again act on)."""
        return self.editor.card

    # --- what the window's shortcuts call -----------------------------------------------------

    def focus_search(self) -> bool:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()
        return True

    def refresh_page(self) -> None:
        """Read the cards (for the search typed) and the card shown again, off the GUI thread."""
        self.model.refresh(self._context.ops.run)
        if self._shown is not None:
            self._show(self._shown)

    def delete_selected(self) -> None:
        """Delete the selected card's scrap (the card goes with it), as the Inbox does; Undo restores both."""
        card = selected_row(self.table, self.model)
        if card is None:
            return
        title = html.escape(card.title)

        def deleted(_changes: Changes) -> None:
            self._last_deleted = card.scrap_id
            self.say(f"Deleted the card <b>{title}</b> and its scrap. <a href='undo'>Undo</a>", MESSAGE_MS)

        self._context.ops.write(
            lambda: self._app.delete_scrap(card.scrap_id), deleted, lambda exc: self.say(html.escape(str(exc)))
        )

    def undo_delete(self) -> None:
        """Bring back the card deleted last (its scrap is restored; the card reappears in its place)."""
        scrap_id, self._last_deleted = self._last_deleted, None
        if scrap_id is None:
            return
        self._reveal = scrap_id
        self._context.ops.write(
            lambda: self._app.restore_scrap(scrap_id),
            lambda _changes: self.say("Restored."),
            lambda exc: self.say(html.escape(str(exc))),
        )

    def say(self, text: str, ms: int = 8000) -> None:
        """A passing message (rich text) above the list."""
        self.message.setText(text)
        self.message.setVisible(bool(text))
        self._message_timer.start(ms)

    # --- showing cards ------------------------------------------------------------------------

    def open_card(self, card_id: str) -> None:
        """Show ``card_id``, clearing a search that would hide it."""
        if self.model.position_of(card_id) is None and self.search.text():
            self.search.clear()
            self._search_timer.stop()  # reload now, once, not again after the debounce
            self.model.search = ""
            self.model.reload()
        if self.model.position_of(card_id) is None:
            self.model.reload()
        if not select_key(self.table, self.model, card_id):
            self._show(card_id)

    def _update_state(self) -> None:
        """The list, or why it is empty: no card yet, or none matching the search."""
        self.delete_button.setEnabled(selected_row(self.table, self.model) is not None)
        if self.model.loading:
            return  # what is shown stays until the new rows arrive
        search = self.model.search
        if self.model.rowCount():
            self.states.show_content()
        elif search:
            self.states.show_no_results(
                f"No card matches “{search}”",
                "The search looks in titles, summaries, tags, the text of your scraps and their meaning: "
                "try fewer or other words.",
                [("clear", "Clear search")],
            )
        else:
            self.states.show_empty("No cards yet", NO_CARDS)

    def _show_selected(self) -> None:
        card = selected_row(self.table, self.model)
        self.delete_button.setEnabled(card is not None)
        if card is not None:
            self._show(card.id)

    def _show(self, card_id: str) -> None:
        """Load the card and its similar cards off the GUI thread, then show them (if still wanted)."""
        self._shown = card_id
        app = self._app

        def load() -> tuple[CardDetail, list[SimilarCard]]:
            return app.cards.get(card_id), app.cards.similar(card_id)

        def loaded(result: tuple[CardDetail, list[SimilarCard]]) -> None:
            if self._shown == card_id:
                self._fill(*result)

        def failed(exc: SanError) -> None:
            if self._shown == card_id:
                self.detail.setPlainText(str(exc))
                self.similar.clear()
                self.editor.show_card(None)

        self._context.ops.run(load, loaded, failed)

    def _clear_detail(self) -> None:
        self._shown = None
        self.editor.show_card(None)
        self.detail.clear()
        self.similar.clear()
        self.similar_label.setText("Similar cards")

    def _follow_search(self) -> None:
        """The detail pane shows a card of the list: one the search leaves out goes, one it keeps is
        selected again (new rows come without a selection)."""
        shown = self._shown
        if shown is None or self.model.loading:
            return
        if self.model.position_of(shown) is not None:
            if selected_row(self.table, self.model) is None:
                select_key(self.table, self.model, shown)
        elif self.model.search:
            self._clear_detail()

    def _fill(self, detail: CardDetail, similar: list[SimilarCard]) -> None:
        self.editor.show_card(detail.card)
        self.detail.setHtml(card_html(detail))
        self.similar.clear()
        for item in similar:
            widget_item = QListWidgetItem(similar_label(item.card.title, item.score))
            widget_item.setData(Qt.ItemDataRole.UserRole, item.card.id)
            widget_item.setToolTip(item.card.summary)
            self.similar.addItem(widget_item)
        if similar and not similar[0].within_threshold:
            self.similar_label.setText("Nothing close — the nearest cards:")
        else:
            self.similar_label.setText("Similar cards" if similar else "Similar cards: none yet")

    def _on_search_text_changed(self, _text: str) -> None:
        self._search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        """The cards matching what was typed, read off the GUI thread; the list changes when they arrive."""
        self.model.search = self.search.text().strip()
        self.model.refresh(self._context.ops.run)
        self._find_tils(self.model.search)

    def _find_tils(self, search: str) -> None:
        """The days whose TIL note ``search`` finds, read off the GUI thread, shown as links."""
        self._til_search = search
        if not search:
            self._show_tils(search, [])
            return
        self._context.ops.run(
            lambda: self._app.cards.search_tils(search, limit=TIL_MATCHES), lambda found: self._show_tils(search, found)
        )

    def _show_tils(self, search: str, found: list[FoundTil]) -> None:
        if search != self._til_search:
            return  # typed on meanwhile
        links = [
            f'<a href="{html.escape(item.til.local_date)}">{html.escape(item.til.local_date)}</a>'
            + (f" {html.escape(item.til.title)}" if item.til.title else "")
            for item in found
        ]
        self.til_matches.setText("In your TIL notes: " + " · ".join(links) if links else "")
        self.til_matches.setVisible(bool(links))

    def _on_states_action_triggered(self, key: str) -> None:
        if key == "clear":
            self.search.clear()
            self._search_timer.stop()
            self._on_search_timer_timeout()
            self.search.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_message_link_activated(self, link: str) -> None:
        if link == "undo":
            self.undo_delete()
        elif link == UNDO_LINK:
            self.editor.undo()

    def _on_til_matches_link_activated(self, local_date: str) -> None:
        self.open_til.emit(local_date)

    def _on_message_timer_timeout(self) -> None:
        self.message.clear()
        self.message.setVisible(False)

    def _on_similar_item_activated(self, item: QListWidgetItem) -> None:
        self.open_card(str(item.data(Qt.ItemDataRole.UserRole)))

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        """Cards made, re-made or edited, scraps deleted or restored: update, add or drop those rows (and
        read the card shown again, its similar cards too)."""
        if changes.library:
            self.refresh_page()
            return
        # a scrap's job that did not make its card (queued, a refinement, a fetch) changes no card here
        affected = sorted((changes.scraps - changes.job_scraps) | changes.cards_of_scraps)
        if not affected:
            return
        search = self.model.search
        self._card_reads.run(
            affected,
            lambda: self._app.cards.cards_of_scraps(affected, search),
            lambda found, newest: self._apply(newest, found, search),
        )

    def _apply(self, scrap_ids: list[str], found: dict[str, CardSummary], search: str) -> None:
        if search != self.model.search:
            return  # the list was reloaded for another search meanwhile
        for scrap_id in scrap_ids:
            card = found.get(scrap_id)
            if card is not None:
                self.model.upsert(card)  # a new card appears on top; an older one when scrolled to
                if scrap_id == self._reveal:
                    self._reveal = None
                    select_key(self.table, self.model, card.id)
                if card.id == self._shown:
                    self._show(card.id)  # edited, analysed again or given a new vector
                continue
            gone = self.model.card_of_scrap(scrap_id)
            if gone is not None:
                position = self.model.position_of(gone.id)
                self.model.remove(gone.id)
                if self._shown == gone.id:
                    self._clear_detail()
                    following = self.model.row_at(min(position or 0, self.model.rowCount() - 1))
                    if following is not None:  # the next card is selected, ready for another Delete
                        select_key(self.table, self.model, following.id)
