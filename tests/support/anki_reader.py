"""Reading an exported package with the official Anki (a test dependency only: AGPL, never shipped): an
empty collection in a temporary folder that imports packages as Anki's File > Import does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest


@dataclass(frozen=True)
class AnkiNote:
    guid: str
    note_id: int
    note_type: str
    fields: dict[str, str]
    tags: tuple[str, ...]
    decks: tuple[str, ...]  # of its cards
    modified: int


@dataclass(frozen=True)
class Imported:
    new: int
    updated: int
    duplicate: int


class AnkiCollection:
    def __init__(self, collection: Collection) -> None:
        self.collection = collection

    def import_package(self, package: Path) -> Imported:
        """With the importer's default options (a newer note updates its copy)."""
        request = ImportAnkiPackageRequest(package_path=str(package), options=ImportAnkiPackageOptions())
        log = self.collection.import_anki_package(request).log
        return Imported(len(log.new), len(log.updated), len(log.duplicate))

    def deck_names(self) -> set[str]:
        return {deck.name for deck in self.collection.decks.all_names_and_ids()}

    def notes(self) -> dict[str, AnkiNote]:
        """Every note by its GUID."""
        found: dict[str, AnkiNote] = {}
        for note_id in self.collection.find_notes(""):
            note = self.collection.get_note(note_id)
            note_type = note.note_type()
            assert note_type is not None
            decks = tuple(
                sorted({self.collection.decks.name(self.collection.get_card(card).did) for card in note.card_ids()})
            )
            found[note.guid] = AnkiNote(
                guid=note.guid,
                note_id=note.id,
                note_type=note_type["name"],
                fields=dict(note.items()),
                tags=tuple(sorted(note.tags)),
                decks=decks,
                modified=note.mod,
            )
        return found


@contextmanager
def empty_collection(folder: Path) -> Iterator[AnkiCollection]:
    folder.mkdir(parents=True, exist_ok=True)
    collection = Collection(str(folder / "collection.anki2"))
    try:
        yield AnkiCollection(collection)
    finally:
        collection.close()
