"""The Cards page's list and texts: the lazy table of cards (newest first, for a search), the card in full
as HTML, and how a similar card is listed."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt

from san_desktop.services.card_fields import fields_phrase
from san_desktop.ui.common.lazy_model import Background, LazyTableModel
from san_desktop.ui.common.look import tone

if TYPE_CHECKING:  # the card service imports numpy: it loads with the page's first read, after the first frame
    from san_desktop.services.cards import CardDetail, CardService, CardSummary


class CardListModel(LazyTableModel["CardSummary"]):
    COLUMNS = ("Title", "Category", "Tags")

    def __init__(
        self, cards: Callable[[], CardService], page_size: int = 200, background: Background | None = None
    ) -> None:
        """``cards`` gives the card service when a page is read (making it imports numpy), with
        ``background`` off the GUI thread."""
        super().__init__(page_size, background)
        self._cards = cards
        self.search = ""
        self._matched: dict[str, tuple[str, ...]] = {}  # a search's results: where each matched

    def fetch_page(self, before_id: str | None, limit: int) -> list[CardSummary]:
        """(Off the GUI thread.) A search's results come whole in the first page, with where they matched."""
        if not self.search.strip():
            return self._cards().list_cards(limit=limit, before_id=before_id)
        if before_id:
            return []
        found = self._cards().search(self.search, limit=limit)
        self._matched = {item.card.id: item.matched for item in found}  # one assignment: safe to read beside
        return [item.card for item in found]

    def row_key(self, row: CardSummary) -> str:
        return row.id

    def cell(self, card: CardSummary, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (card.title, card.category or "", ", ".join(card.tags))[column]
        if role == Qt.ItemDataRole.ToolTipRole:  # the whole of what a narrow column cuts short
            summary = card.summary + (f"\n\nEdited by you: {fields_phrase(card.edited)}" if card.edited else "")
            matched = self._matched.get(card.id) if self.search.strip() else None
            if matched:
                from san_desktop.services.search import WHERE_SAID  # imported by the search that matched

                summary += "\n\nFound by " + ", ".join(WHERE_SAID[where] for where in matched)
            return (summary, card.category or None, ", ".join(card.tags) or None)[column]
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
    tag_colour = tone("tag").name()
    tags = " ".join(f"<span style='color:{tag_colour}'>#{html.escape(tag)}</span>" for tag in card.tags)
    source = html.escape(detail.source_type.lower() + (f": {detail.source_ref}" if detail.source_ref else ""))
    parts = [
        f"<h2>{html.escape(card.title)}</h2>",
        f"<p><b>{html.escape(card.category or 'Uncategorised')}</b> &nbsp; {tags}</p>",
        f"<p>{html.escape(card.summary)}</p>",
    ]
    if card.edited:
        edited = tone("info").name()
        parts.append(
            f"<p><small style='color:{edited}'>✎ Edited by you: {fields_phrase(card.edited)} "
            "(analysing the card again keeps them)</small></p>"
        )
    parts.append(f"<p><small>Source: {source}</small></p>")
    if detail.refined_content and detail.refined_content.strip() != detail.content.strip():
        parts.append(
            f"<h4>Refined text</h4><pre style='white-space:pre-wrap'>{html.escape(detail.refined_content)}</pre>"
        )
    parts.append(f"<h4>Original</h4><pre style='white-space:pre-wrap'>{html.escape(detail.content)}</pre>")
    return "".join(parts)
