"""Reading cards in tests that have only the database."""

from __future__ import annotations

from san_desktop.db.database import Database
from san_desktop.services.cards import CardService, CardSummary


def all_cards(db: Database, search: str = "") -> list[CardSummary]:
    return CardService(db).list_cards(search)
