from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from san_desktop.app import Changes
from san_desktop.core.errors import SanError
from san_desktop.services.cards import CardDetail, CardService, CardSummary, SimilarCard
from san_desktop.ui.context import AppContext
from san_desktop.ui.lazy_model import LazyTableModel, select_key, selected_row


class CardListModel(LazyTableModel[CardSummary]):
    COLUMNS = ("Title", "Category", "Tags")

    def __init__(self, cards: CardService, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._cards = cards
        self.search = ""

    def fetch_page(self, before_id: str | None, limit: int) -> list[CardSummary]:
        return self._cards.list_cards(self.search, limit=limit, before_id=before_id)

    def row_key(self, row: CardSummary) -> str:
        return row.id

    def cell(self, card: CardSummary, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (card.title, card.category or "", ", ".join(card.tags))[column]
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return card.summary
        return None

    def card_of_scrap(self, scrap_id: str) -> CardSummary | None:
        """The loaded row of this scrap's card (a few hundred rows at most are loaded)."""
        return next((row for row in self.loaded_rows() if row.scrap_id == scrap_id), None)


def similar_label(title: str, score: float) -> str:
    """How a similar card is listed: its title and its score (``SimilarCard.score``, the figure
    ``san cards similar`` gives)."""
    return f"{title}   ({score:.0%} similar)"


def card_html(detail: CardDetail) -> str:
    card = detail.card
    tags = " ".join(f"<span style='color:#2f6f5e'>#{html.escape(tag)}</span>" for tag in card.tags)
    source = html.escape(detail.source_type.lower() + (f": {detail.source_ref}" if detail.source_ref else ""))
    parts = [
        f"<h2>{html.escape(card.title)}</h2>",
        f"<p><b>{html.escape(card.category or 'Uncategorised')}</b> &nbsp; {tags}</p>",
        f"<p>{html.escape(card.summary)}</p>",
        f"<p><small>Source: {source}</small></p>",
    ]
    if detail.refined_content and detail.refined_content.strip() != detail.content.strip():
        parts.append(
            f"<h4>Refined text</h4><pre style='white-space:pre-wrap'>{html.escape(detail.refined_content)}</pre>"
        )
    parts.append(f"<h4>Original</h4><pre style='white-space:pre-wrap'>{html.escape(detail.content)}</pre>")
    return "".join(parts)


class CardsPage(QWidget):
    """Cards with text search, the selected card in full, and its similar cards (click to open); live
    by the change hub. No signals of its own."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._app = context.app
        self._shown: str | None = None  # the card whose detail is (being) shown
        self.model = CardListModel(context.app.cards)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search titles, summaries, tags and categories")
        self.search.setClearButtonEnabled(True)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnWidth(0, 260)
        self.table.setColumnWidth(1, 140)
        self.detail = QTextBrowser()
        self.detail.setPlaceholderText("Select a card.")
        self.similar = QListWidget()
        self.similar_label = QLabel("Similar cards")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search)
        left_layout.addWidget(self.table, 1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.detail, 3)
        right_layout.addWidget(self.similar_label)
        right_layout.addWidget(self.similar, 1)
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)

        heading = QHBoxLayout()
        heading.addWidget(QLabel("<h2>Cards</h2>"))
        heading.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(heading)
        layout.addWidget(splitter, 1)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        self.similar.itemActivated.connect(self._on_similar_item_activated)
        self.similar.itemClicked.connect(self._on_similar_item_activated)
        context.hub.changed.connect(self._on_hub_changed)
        self.model.reload()

    def open_card(self, card_id: str) -> None:
        """Show ``card_id``, clearing a search that would hide it."""
        if self.model.position_of(card_id) is None and self.search.text():
            self.search.clear()
            self._search_timer.stop()  # reload now, once, not again after the debounce
            self._on_search_timer_timeout()
        if self.model.position_of(card_id) is None:
            self.model.reload()
        if not select_key(self.table, self.model, card_id):
            self._show(card_id)

    def _show_selected(self) -> None:
        card = selected_row(self.table, self.model)
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

        self._context.ops.run(load, loaded, failed)

    def _fill(self, detail: CardDetail, similar: list[SimilarCard]) -> None:
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

    def _on_search_timer_timeout(self) -> None:
        self.model.search = self.search.text().strip()
        self.model.reload()

    def _on_similar_item_activated(self, item: QListWidgetItem) -> None:
        self.open_card(str(item.data(Qt.ItemDataRole.UserRole)))

    def _on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        """Cards made or re-made, scraps deleted or restored: update, add or drop those rows."""
        affected = sorted(changes.scraps | changes.cards_of_scraps)
        if not affected:
            return
        search = self.model.search
        self._context.ops.run(
            lambda: self._app.cards.cards_of_scraps(affected, search),
            lambda found: self._apply(affected, found, search),
        )

    def _apply(self, scrap_ids: list[str], found: dict[str, CardSummary], search: str) -> None:
        if search != self.model.search:
            return  # the list was reloaded for another search meanwhile
        for scrap_id in scrap_ids:
            card = found.get(scrap_id)
            if card is not None:
                self.model.upsert(card)  # a new card appears on top; an older one when scrolled to
                continue
            gone = self.model.card_of_scrap(scrap_id)
            if gone is not None:
                self.model.remove(gone.id)
                if self._shown == gone.id:
                    self._shown = None
                    self.detail.clear()
                    self.similar.clear()
