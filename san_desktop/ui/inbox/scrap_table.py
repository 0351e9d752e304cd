"""The Inbox's table: scraps newest first with what their analysis, page fetch and refinement are doing."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from san_desktop.core.enums import JobStatus, SourceType
from san_desktop.core.redact import readable
from san_desktop.core.text import preview
from san_desktop.services.scrap_info import ScrapInfo
from san_desktop.services.scraps import ScrapService
from san_desktop.ui.common.lazy_model import LazyTableModel
from san_desktop.ui.common.look import tone
from san_desktop.ui.inbox.scrap_states import card_error, card_failed, card_text, refine_text, scrap_label
from san_desktop.ui.jobs.table_model import local_time

CAPTURED, SCRAP, SOURCE, CARD, REFINED = range(5)
FAILED_TONE = "error"  # a failed analysis, fetch or refinement (``look.tone``)


def _text_tooltip(info: ScrapInfo) -> str:
    """A titled link: its title and address, then its page's text once fetched; else the text."""
    if info.source_type is not SourceType.URL or not info.title:
        return preview(info.content, 600)
    lines = [info.title, info.source_ref or ""]
    return "\n".join(lines if info.awaiting_page else [*lines, "", preview(info.content, 600)])


class ScrapTableModel(LazyTableModel[ScrapInfo]):
    COLUMNS = ("Captured", "Scrap", "Source", "Card", "Cleaned-up text")
    CLEANED_TIP = (
        "A cleaned-up copy of the scrap's text (shown with its card); the scrap itself stays as it was. "
        "Not needed: the text was clean already."
    )

    def __init__(self, scraps: ScrapService, page_size: int = 200) -> None:
        super().__init__(page_size)
        self._scraps = scraps
        self.paused = False  # the AI pool is held by its breaker: waiting jobs say so

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return self.CLEANED_TIP if section == 4 else None
        return super().headerData(section, orientation, role)

    def fetch_page(self, before_id: str | None, limit: int) -> list[ScrapInfo]:
        return self._scraps.list_scraps(before_id=before_id, limit=limit)

    def row_key(self, row: ScrapInfo) -> str:
        return row.id

    def cell(self, info: ScrapInfo, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return self._shown(info, column)
        if role == Qt.ItemDataRole.ForegroundRole and (
            (column == 3 and card_failed(info)) or (column == 4 and info.refine_status is JobStatus.FAILED)
        ):
            return tone(FAILED_TONE)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 1:
                return _text_tooltip(info)
            if column == 3:
                return readable(card_error(info), "\n\u2190 ") or None
            if column == 4 and info.refine_error:
                return readable(info.refine_error, "\n\u2190 ")
        return None

    def _shown(self, info: ScrapInfo, column: int) -> str:
        if column == 0:
            return local_time(info.created_at)
        if column == 1:
            return preview(scrap_label(info), 400)  # cut to the column by whole words
        if column == 2:
            return preview(info.source_type.value.lower() + (f": {info.source_ref}" if info.source_ref else ""), 200)
        return card_text(info, self.paused) if column == 3 else refine_text(info, self.paused)

    def repaint_states(self) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 3), self.index(self.rowCount() - 1, 4))
