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

from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.queue.records import JobEvent
from san_desktop.services.cards import (
    CardDetail,
    CardSummary,
    card_id_for_scrap,
    get_card,
    list_cards,
    similar_cards,
)
from san_desktop.ui.context import AppContext
from san_desktop.ui.lazy_model import LazyTableModel, select_key, selected_row


class CardListModel(LazyTableModel[CardSummary]):
    COLUMNS = ("Title", "Category", "Tags")

    def __init__(self, context: AppContext, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._context = context
        self.search = ""

    def fetch_page(self, before_id: str | None, limit: int) -> list[CardSummary]:
        return list_cards(self._context.backend.db, self.search, limit=limit, before_id=before_id)

    def row_key(self, row: CardSummary) -> str:
        return row.id

    def cell(self, card: CardSummary, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (card.title, card.category or "", ", ".join(card.tags))[column]
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return card.summary
        return None


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
    """Cards with text search, the selected card in full, and its similar cards (click to open).
    No signals of its own."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self.model = CardListModel(context)
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

        self._made: set[str] = set()  # scraps whose card was just made, gathered between ticks
        self._made_timer = QTimer(self)
        self._made_timer.setSingleShot(True)
        self._made_timer.setInterval(100)
        self._made_timer.timeout.connect(self._on_made_timer_timeout)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        self.similar.itemActivated.connect(self._on_similar_item_activated)
        self.similar.itemClicked.connect(self._on_similar_item_activated)
        context.runner.job_changed.connect(self._on_runner_job_changed)
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
        try:
            detail = get_card(self._context.backend.db, card_id)
            threshold = self._context.providers.get().similarity_threshold
            similar = similar_cards(self._context.backend.db, card_id, threshold)
        except SanError as exc:
            self.detail.setPlainText(str(exc))
            self.similar.clear()
            return
        self.detail.setHtml(card_html(detail))
        self.similar.clear()
        for item in similar:
            widget_item = QListWidgetItem(f"{item.card.title}   ({1 - item.distance:.0%} similar)")
            widget_item.setData(Qt.ItemDataRole.UserRole, item.card.id)
            widget_item.setToolTip(item.card.summary)
            self.similar.addItem(widget_item)
        if similar and not similar[0].within_threshold:
            self.similar_label.setText("Nearest cards (none is close)")
        else:
            self.similar_label.setText("Similar cards" if similar else "Similar cards: none yet")

    def _on_search_timer_timeout(self) -> None:
        self.model.search = self.search.text().strip()
        self.model.reload()

    def _on_similar_item_activated(self, item: QListWidgetItem) -> None:
        self.open_card(str(item.data(Qt.ItemDataRole.UserRole)))

    def _on_runner_job_changed(self, event: JobEvent) -> None:
        if event.job.job_type is JobType.CARD_ANALYSIS and event.new_status is JobStatus.COMPLETED:
            self._made.add(event.job.target_id)
            if not self._made_timer.isActive():
                self._made_timer.start()

    def _on_made_timer_timeout(self) -> None:
        """Cards were made or re-made: update their rows, or put new ones on top (once per tick)."""
        made, self._made = sorted(self._made), set()
        db = self._context.backend.db
        for scrap_id in made:
            card_id = card_id_for_scrap(db, scrap_id)
            if card_id is None:
                continue
            newest = self.model.row_at(0)
            if self.model.position_of(card_id) is None and newest is not None and card_id < newest.id:
                continue  # older than what is shown: it appears when scrolled to
            matches = list_cards(db, self.model.search, limit=1, before_id=_after(card_id))
            if matches and matches[0].id == card_id:
                self.model.upsert(matches[0])


def _after(card_id: str) -> str:
    """An id that sorts right after ``card_id`` (for "this card, if it matches" with ``before_id``)."""
    return card_id + "\uffff"
