"""What each item of an import is to the library: new, a new text of a scrap an earlier import made (found by what
the item is in its source, ``scraps.import_key``), already there (that scrap as it is, or the same content), and
the writes of an update (the replaced text kept in ``scrap_versions``, for Undo import).

An item without an identity in its source (a link, a pasted highlight) is found by its content, as capture finds a
duplicate. An item with one that matches no earlier import but whose content a scrap has already is that scrap:
the scrap takes its key, so that the next import of an edited version updates it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import sqlalchemy as sa

from san_desktop.db.tables import scraps
from san_desktop.queue.store import JobStore
from san_desktop.services.scrap_versions import analyse_again, keep_version


class Outcome(StrEnum):
    NEW = "new"
    UPDATED = "updated"
    ALREADY_THERE = "already there"
    MERGED = "merged"
    LEFT_OUT = "left out"


@dataclass(frozen=True)
class ItemOutcome:
    """What became of one entry of the source: ``detail`` says why it was left out, what it was merged into, or
    what an update changed (and that the person's own edits of the card are kept)."""

    source_ref: str
    outcome: Outcome
    detail: str = ""
    title: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"source": self.source_ref, "outcome": self.outcome.value, "detail": self.detail, "title": self.title}


@dataclass(frozen=True)
class Row:
    """A scrap's values, checked, with the keys it is found by."""

    values: dict[str, object]
    source_ref: str  # the item's, as the person reads it
    warnings: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[object, object]:
        return (self.values["source_type"], self.values["content_hash"])

    @property
    def import_key(self) -> str | None:
        key = self.values.get("import_key")
        return str(key) if key is not None else None


@dataclass(frozen=True)
class _Stored:
    id: str
    content_hash: str
    title: str | None
    given_tags: str | None
    import_key: str | None


@dataclass(frozen=True)
class Match:
    """A row's outcome against the library: ``scrap`` is the scrap it updates or already is (None for a new one);
    ``adopt``: that scrap takes the row's import key."""

    row: Row
    outcome: Outcome
    scrap: _Stored | None = None
    adopt: bool = False

    def item_outcome(self) -> ItemOutcome:
        details = list(self.row.warnings)
        if self.outcome is Outcome.UPDATED:
            details.insert(0, "a new text of what an earlier import brought; your edits of its card are kept")
        title = self.row.values.get("title")
        return ItemOutcome(self.row.source_ref, self.outcome, "; ".join(details), str(title) if title else None)


_COLUMNS = (scraps.c.id, scraps.c.content_hash, scraps.c.title, scraps.c.given_tags, scraps.c.import_key)


def match(conn: sa.Connection, rows: Sequence[Row]) -> list[Match]:
    """Each row's outcome against the live scraps (``NEW``, ``UPDATED`` or ``ALREADY_THERE``), read in
    ``conn``: the store's write transaction, or a dry run's read."""
    live = scraps.c.deleted_at.is_(None)
    keys = [key for key in (row.import_key for row in rows) if key is not None]
    by_key: dict[str, _Stored] = {}
    if keys:
        for found in conn.execute(sa.select(*_COLUMNS).where(live, scraps.c.import_key.in_(keys))):
            by_key.setdefault(found.import_key, _Stored(*found))
    by_content: dict[tuple[object, object], _Stored] = {}
    for source_type in {row.values["source_type"] for row in rows}:
        hashes = [row.values["content_hash"] for row in rows if row.values["source_type"] == source_type]
        query = sa.select(*_COLUMNS).where(live, scraps.c.source_type == source_type, scraps.c.content_hash.in_(hashes))
        by_content.update(((source_type, found.content_hash), _Stored(*found)) for found in conn.execute(query))
    matches: list[Match] = []
    for row in rows:
        stored = by_key.get(row.import_key) if row.import_key is not None else None
        same_content = by_content.get(row.key)
        if stored is None:
            if same_content is None:
                matches.append(Match(row, Outcome.NEW))
            else:
                adopt = row.import_key is not None and same_content.import_key is None
                matches.append(Match(row, Outcome.ALREADY_THERE, same_content, adopt=adopt))
        elif stored.content_hash == row.values["content_hash"] and not _new_details(row, stored):
            matches.append(Match(row, Outcome.ALREADY_THERE, stored))
        elif same_content is not None and same_content.id != stored.id:
            # its new text is another scrap's already: one live scrap per content, so this one stays as it was
            matches.append(Match(row, Outcome.ALREADY_THERE, same_content))
        else:
            matches.append(Match(row, Outcome.UPDATED, stored))
    return matches


def _new_details(row: Row, stored: _Stored) -> bool:
    """Whether the source gives the scrap a title or tags other than it has (a note's renamed title)."""
    title, tags = row.values.get("title"), row.values.get("given_tags")
    return (title is not None and title != stored.title) or (tags is not None and tags != stored.given_tags)


def update(conn: sa.Connection, queue: JobStore, found: Match, batch_id: str) -> None:
    """Give ``found.scrap`` the row's text (and title and tags when the source has them), the replaced ones kept
    as a version of this import; the card is analysed again (fields the person edited are kept, as Analyse again
    keeps them) and the text refined again."""
    assert found.scrap is not None
    scrap_id = found.scrap.id
    keep_version(conn, scrap_id, batch_id, queue.clock())
    values = found.row.values
    changes: dict[str, object] = {
        "content": values["content"],
        "content_hash": values["content_hash"],
        "refined_content": None,
        "analysis_stopped": False,
        "refine_stopped": False,
    }
    for name in ("title", "given_tags", "given_card", "source_ref"):
        if values.get(name) is not None:
            changes[name] = values[name]
    conn.execute(sa.update(scraps).where(scraps.c.id == scrap_id).values(changes))
    analyse_again(conn, queue, scrap_id)


def adopt(conn: sa.Connection, found: Match) -> None:
    """The scrap an item's content matched takes the item's key (an import made before keys, or a capture)."""
    assert found.scrap is not None
    conn.execute(sa.update(scraps).where(scraps.c.id == found.scrap.id).values(import_key=found.row.import_key))
