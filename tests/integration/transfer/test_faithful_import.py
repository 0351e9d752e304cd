"""Issue 40: an item imported again is the scrap it made before (an edited note updates it, the person's card edits
kept), undoing that import puts the old text back, and SAN's Markdown export imported into an empty library gives
every card its title, tags, source, text and date again."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.enums import JobPool
from san_desktop.db.models import Category
from san_desktop.db.tables import knowledge_cards, scraps
from san_desktop.services.card_edits import CardEdit
from san_desktop.transfer.import_matching import Outcome
from san_desktop.transfer.importer import ImportSummary
from tests.support.til import executor, finished_til

RAFT = "# Raft\n\nRaft elects a leader; the leader replicates its log to a majority of followers."
RAFT_EDITED = RAFT + "\n\nA follower that hears no heartbeat becomes a candidate. #consensus/raft"
WAL = "# WAL\n\nSQLite's write-ahead log lets readers go on while a writer commits."


categories = Category.__table__


def _write(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    _write(folder, "db/raft.md", RAFT)
    _write(folder, "db/wal.md", WAL)
    return folder


def _import(app: SanApp, path: Path) -> ImportSummary:
    summary = app.store_import(app.read_import(path)).value
    executor(app).drain(JobPool.AI)
    return summary


def _card_of(app: SanApp, source_ref: str) -> tuple[str, str, str]:
    """(card id, card title, scrap text) of the live scrap from ``source_ref``."""
    with app.db.engine.connect() as conn:
        row = conn.execute(
            sa.select(knowledge_cards.c.id, knowledge_cards.c.title, scraps.c.content)
            .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
            .where(scraps.c.source_ref == source_ref, scraps.c.deleted_at.is_(None))
        ).one()
    return row.id, row.title, row.content


def test_an_edited_note_imported_again_updates_its_card_and_keeps_the_persons_title(app: SanApp, vault: Path) -> None:
    first = app.store_import(app.read_import(vault)).value
    executor(app).drain(JobPool.AI)
    assert (first.imported, first.updated) == (2, 0)
    card_id, _, _ = _card_of(app, "db/raft.md")
    app.edit_card(card_id, CardEdit(title="Raft, my way"))
    cards_before = len(app.cards.list_cards(limit=100))

    _write(vault, "db/raft.md", RAFT_EDITED)
    preview = app.store_import(app.read_import(vault), dry_run=True).value
    assert (preview.imported, preview.updated, preview.duplicates) == (0, 1, 1)
    again = app.store_import(app.read_import(vault)).value
    executor(app).drain(JobPool.AI)

    assert (again.imported, again.updated, again.duplicates) == (0, 1, 1)
    outcomes = {one.source_ref: one for one in again.outcomes}
    assert outcomes["db/raft.md"].outcome is Outcome.UPDATED
    assert "your edits of its card are kept" in outcomes["db/raft.md"].detail
    assert outcomes["db/wal.md"].outcome is Outcome.ALREADY_THERE
    assert [one.as_dict() for one in again.outcomes] == [one.as_dict() for one in preview.outcomes]
    same_id, title, text = _card_of(app, "db/raft.md")
    assert same_id == card_id  # the same card, not a second one
    assert title == "Raft, my way"
    assert text.endswith("becomes a candidate. #consensus/raft")
    assert len(app.cards.list_cards(limit=100)) == cards_before

    third = app.store_import(app.read_import(vault)).value  # nothing changed since: nothing to do
    assert (third.imported, third.updated, third.batch_id) == (0, 0, None)

    assert again.batch_id is not None
    assert "updated" in app.undo_import_preview(again.batch_id).sentence()
    app.undo_import(again.batch_id)  # the old text comes back; the card stays
    back_id, _, back = _card_of(app, "db/raft.md")
    assert (back_id, back) == (card_id, RAFT)


def test_a_note_imported_before_imports_had_keys_is_found_by_its_text_and_then_followed(
    app: SanApp, vault: Path
) -> None:
    """A library whose notes came in before an import remembered what they were (revision 0029): the same text
    is that scrap, which takes the note's key, so that the next import of the edited note updates it."""
    app.store_import(app.read_import(vault))
    with app.db.write_connection() as conn:
        conn.execute(sa.update(scraps).values(import_key=None))
    unchanged = app.store_import(app.read_import(vault)).value
    assert (unchanged.imported, unchanged.duplicates) == (0, 2)
    _write(vault, "db/raft.md", RAFT_EDITED)
    edited = app.store_import(app.read_import(vault)).value
    assert (edited.imported, edited.updated) == (0, 1)


@pytest.fixture
def empty_app(tmp_path: Path) -> Iterator[SanApp]:
    other = SanApp(start_backend(tmp_path / "empty-library", kind="cli", log_to_stderr=False))
    yield other
    other.close()


def _library(app: SanApp) -> dict[str, tuple[object, ...]]:
    """Each card by its scrap's text: its title, tags, source, capture time, summary and category."""
    with app.db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(
                knowledge_cards.c.id,
                knowledge_cards.c.title,
                knowledge_cards.c.summary,
                categories.c.name.label("category"),
                scraps.c.source_ref,
                sa.func.coalesce(sa.func.nullif(scraps.c.refined_content, ""), scraps.c.content).label("text"),
                scraps.c.created_at,
            )
            .join(knowledge_cards, knowledge_cards.c.scrap_id == scraps.c.id)
            .outerjoin(categories, categories.c.id == knowledge_cards.c.category_id)
            .where(scraps.c.deleted_at.is_(None))
        ).all()
    tags = {card.id: sorted(card.tags) for card in app.cards.list_cards(limit=1000)}
    return {
        row.text: (row.title, tags[row.id], row.source_ref, row.created_at, row.summary, row.category) for row in rows
    }


def test_the_markdown_export_imported_into_an_empty_library_gives_every_card_back(
    app: SanApp, empty_app: SanApp, vault: Path, tmp_path: Path
) -> None:
    _import(app, vault)
    app.capture_html("<p>Paxos agrees on one value among unreliable acceptors.</p>", "https://example.com/paxos")
    finished_til(app)
    card_id, _, _ = _card_of(app, "db/wal.md")
    app.edit_card(card_id, CardEdit(title="WAL (edited)", tags=("sqlite", "durability")))
    original = _library(app)
    exported = app.export_markdown(tmp_path / "export")
    assert exported.cards == len(original) == 5

    summary = _import(empty_app, tmp_path / "export")

    assert (summary.imported, summary.updated, summary.merged) == (5, 0, 0)
    assert [one.source_ref for one in summary.refused] == [f"TIL/{app.til.today()}.md"]  # written again, not a card
    assert _library(empty_app) == original
    assert all(isinstance(value[3], datetime) for value in original.values())
    assert all(value[5] for value in original.values())  # (each has a category to keep)


def test_the_export_links_cards_that_share_tags_and_an_imported_notes_links_resolve(
    app: SanApp, tmp_path: Path
) -> None:
    """Issue 40: the export held the summary alone, and links of imported notes pointed to files that do not exist."""
    vault = tmp_path / "vault"
    _write(vault, "db/raft.md", "---\ntags: [consensus]\n---\n# Raft\n\nLeaders replicate logs. See [[paxos|Paxos]].")
    _write(vault, "db/paxos.md", "---\ntags: [consensus]\n---\n# Paxos\n\nAcceptors agree on one value.")
    _write(vault, "other.md", "---\ntags: [cooking]\n---\n# Bread\n\nDough rises. [[nowhere]] stays as written.")
    _import(app, vault)
    paxos_id, _, _ = _card_of(app, "db/paxos.md")
    app.edit_card(paxos_id, CardEdit(title="Paxos, the original"))

    app.export_markdown(tmp_path / "export")

    notes = {path.stem: path.read_text(encoding="utf-8") for path in (tmp_path / "export" / "Cards").glob("*.md")}
    raft = next(text for text in notes.values() if "Leaders replicate logs." in text)
    assert "See [[Paxos, the original|Paxos]]." in raft  # the note's link, to the file its card has now
    assert "## Related\n\n- [[Paxos, the original]]" in raft  # they share a tag
    bread = next(text for text in notes.values() if "Dough rises." in text)
    assert "[[nowhere]] stays as written." in bread
    assert "## Related" not in bread
    links = {link for text in notes.values() for link in re.findall(r"\[\[([^\]|#]+)", text)} - {"nowhere"}
    assert links <= set(notes)  # every other link resolves to a card's file


KINDLE_ENTRY = (
    "Designing Data-Intensive Applications (Martin Kleppmann)\n"
    "- Your Highlight on page 12 | Location 120-{end} | Added on Monday, March 4, 2024 10:{minute}:00 PM\n\n"
    "{text}\n==========\n"
)


def test_a_kindle_highlight_extended_since_the_last_import_updates_its_scrap(app: SanApp, tmp_path: Path) -> None:
    """Kindle appends an extended highlight as a new entry: imported again, it is the same highlight (its book and
    where it starts), so its scrap gets the longer text instead of a second card coming."""
    clippings = tmp_path / "My Clippings.txt"
    first = KINDLE_ENTRY.format(end=122, minute=11, text="A log is an append-only sequence of records.")
    clippings.write_text(first, encoding="utf-8")
    assert _import(app, clippings).imported == 1
    longer = "A log is an append-only sequence of records. It is totally ordered by time."
    clippings.write_text(first + KINDLE_ENTRY.format(end=126, minute=13, text=longer), encoding="utf-8")

    again = _import(app, clippings)

    assert (again.imported, again.updated, again.merged) == (0, 1, 1)  # the first entry: extended later
    with app.db.engine.connect() as conn:
        texts = list(conn.scalars(sa.select(scraps.c.content).where(scraps.c.deleted_at.is_(None))))
    assert len(texts) == 1
    assert texts[0].startswith(longer)


def test_the_same_readwise_export_imported_again_is_already_there(app: SanApp) -> None:
    data = Path(__file__).parents[2] / "data" / "imports" / "readwise_export.csv"
    first = app.store_import(app.read_import(data)).value
    again = app.store_import(app.read_import(data)).value
    assert first.imported > 0
    assert (again.imported, again.updated, again.duplicates) == (0, 0, first.imported)
