"""The cards and the TIL notes as a folder of Markdown files with YAML front matter (an Obsidian vault or a
folder in one): ``Cards/<title>.md`` per card, ``TIL/<YYYY-MM-DD>.md`` per day with a TIL, the day's text
followed by wikilinks to the day's cards.

A card's note holds what a person keeps: front matter (title, tags, category, source, the capture's time as
``created`` and the card's last change as ``updated``), the summary, the scrap's whole text (refined if refined)
and wikilinks to the cards that share its tags. The summary and the text sit between HTML comments (Obsidian
shows none) that the Markdown importer reads back (``readers.notes``): the export imported into an empty library
gives every card its title, tags, source, text and date again. A wikilink of an imported note to another imported
note is written with the name that note's card has in the export, so that it resolves.

Exporting again into the same folder updates the files this export wrote (``export_manifest``): a card
whose title changed moves to its new name, a card that is gone takes its file with it, and a file someone
else wrote or edited is left as it is; a name it holds is not used (the next, ``<title> (2).md``, is).

The folder is the one the person names; below it nothing is a link: a ``Cards`` or ``TIL`` that is a link
(or a file) is refused, a file that is a link is someone else's, and every path written or removed is
checked part by part (``core.user_files.Confined``). A dry run plans the same and writes nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path, PurePosixPath

import yaml

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.errors import SanError
from san_desktop.core.user_files import Confined, TargetExistsError
from san_desktop.db.database import Database
from san_desktop.transfer import export_manifest
from san_desktop.transfer.export_manifest import Manifest, digest
from san_desktop.transfer.file_names import MAX_SUFFIX, is_numbered, numbered, safe_stem
from san_desktop.transfer.files import NothingToExportError, writing
from san_desktop.transfer.items import ImportKind
from san_desktop.transfer.library import ExportCard, ExportTil, counted, read_cards, read_tils
from san_desktop.transfer.readers.notes import SAN_KEY, SAN_KIND, SUMMARY_END, SUMMARY_START, TEXT_END, TEXT_START

CARDS_FOLDER = "Cards"
TIL_FOLDER = "TIL"
MAX_RELATED = 5  # links to related cards a card's note ends with
_WIDE_TAG = 50
# [[target]], [[target#heading]], [[target|shown]]
_WIKILINK = re.compile(r"\[\[(?P<target>[^\]|#\n]+)(?P<rest>[#|][^\]\n]*)?\]\]")


@dataclass(frozen=True)
class MarkdownExport:
    folder: Path
    cards: int
    tils: int
    written: int  # files made or changed
    unchanged: int
    removed: int  # files of an earlier export whose card was renamed or is gone
    kept: tuple[str, ...] = ()  # files of an earlier export someone edited since: left as they are
    dry_run: bool = False  # nothing was written: the counts are what an export would do

    @property
    def summary(self) -> str:
        """One line, then a line per file kept."""
        what = f"{counted(self.cards, 'card')} and {counted(self.tils, 'TIL note')} to {self.folder}"
        if self.dry_run:
            lines = [
                f"Would export {what} ({self.written} to write, {self.unchanged} unchanged, {self.removed} to "
                "remove); nothing was written"
            ]
        else:
            lines = [f"Exported {what} ({self.written} written, {self.unchanged} unchanged, {self.removed} removed)"]
        lines += [f"  {path} was edited since the last export: left as it is (written beside it)" for path in self.kept]
        return "\n".join(lines)


@dataclass(frozen=True)
class _Item:
    key: str  # the manifest's: "card:<id>", "til:<summary id>"
    folder: str
    stem: str  # the name it would like (``safe_stem`` of its title)


def front_matter(values: dict[str, object], body: str) -> str:
    header = yaml.safe_dump(values, allow_unicode=True, sort_keys=False, default_flow_style=False)
    return f"---\n{header}---\n\n{body.rstrip()}\n"


def card_markdown(card: ExportCard, related: Sequence[str] = (), names: Mapping[str, str] | None = None) -> str:
    """``related``: the file names of the cards to link to; ``names``: the export's file name of each imported
    note, by its name in its vault (casefolded), for the text's wikilinks."""
    values: dict[str, object] = {
        "title": card.title,
        "tags": list(card.tags),
        "category": card.category,
        "source": card.source_ref,
        "created": card.captured_at.isoformat(),  # (to the microsecond: imported again, the same time)
        "updated": card.updated_at.isoformat(),
        SAN_KEY: card.id,
    }
    text = _relinked(card.text, names or {})
    parts = [
        f"# {card.title}",
        SUMMARY_START,
        _relinked(card.summary, names or {}).strip(),
        SUMMARY_END,
        TEXT_START,
        text.strip("\n"),
        TEXT_END,
    ]
    if card.source_ref:
        parts.append(f"Source: {card.source_ref}")
    if related:
        parts.append("## Related\n\n" + "\n".join(f"- [[{name}]]" for name in related))
    return front_matter(values, "\n\n".join(parts))


def _relinked(text: str, names: Mapping[str, str]) -> str:
    def link(found: re.Match[str]) -> str:
        name = names.get(found["target"].strip().casefold())
        return found[0] if name is None else f"[[{name}{found['rest']}]]"

    return _WIKILINK.sub(link, text) if names else text


def related_cards(cards: Sequence[ExportCard]) -> dict[str, list[str]]:
    """Each card's related cards (ids): those sharing the most of its tags, then by title; a tag on more than
    ``_WIDE_TAG`` cards relates nothing (it is a shelf, not a subject)."""
    holding: dict[str, list[ExportCard]] = {}
    for card in cards:
        for tag in {tag.casefold() for tag in card.tags}:
            holding.setdefault(tag, []).append(card)
    titles = {card.id: card.title.casefold() for card in cards}
    related: dict[str, list[str]] = {}
    for card in cards:
        shared: dict[str, int] = {}
        for tag in {tag.casefold() for tag in card.tags}:
            if len(holding[tag]) <= _WIDE_TAG:
                for other in holding[tag]:
                    if other.id != card.id:
                        shared[other.id] = shared.get(other.id, 0) + 1
        ranked = sorted(shared, key=lambda other: (-shared[other], titles[other], other))
        related[card.id] = ranked[:MAX_RELATED]
    return related


def _vault_names(cards: Sequence[ExportCard], paths: Mapping[str, str]) -> dict[str, str]:
    """The export's file name of each card of an imported note, by the note's name in its vault (casefolded)."""
    names: dict[str, str] = {}
    for card in cards:
        key = card.import_key or ""
        if key.startswith(f"{ImportKind.MARKDOWN.value}:"):
            names.setdefault(PurePosixPath(key).stem.casefold(), PurePosixPath(paths[f"card:{card.id}"]).stem)
    return names


def til_markdown(til: ExportTil, links: Sequence[str]) -> str:
    values: dict[str, object] = {
        "title": til.title,
        "date": til.local_date,
        "tags": ["til"],
        "created": til.created_at.isoformat(timespec="seconds"),
        SAN_KEY: til.summary_id,
        SAN_KIND: "til",  # (left out by the Markdown import: the TIL is written again from its cards)
    }
    body = til.markdown.rstrip()
    if links:
        body += "\n\n## Cards\n\n" + "\n".join(f"- [[{name}]]" for name in links)
    return front_matter(values, body)


class _Namer:
    """Each item's file: the one it had when it still fits its title and is still this export's, else the
    first of its names that nobody else's file holds. Names compare without case (Windows and macOS)."""

    def __init__(self, folder: Confined, manifest: Manifest) -> None:
        self.folder = folder
        self.manifest = manifest
        self.claimed: set[str] = set()
        self.present: dict[str, dict[str, str]] = {}  # folder -> casefolded name -> name on disk

    def _on_disk(self, subfolder: str, name: str) -> str | None:
        if subfolder not in self.present:
            self.present[subfolder] = {entry.casefold(): entry for entry in self.folder.names(subfolder)}
        return self.present[subfolder].get(name.casefold())

    def _free(self, path: str) -> bool:
        if path.casefold() in self.claimed:
            return False
        subfolder, name = path.split("/", 1)
        found = self._on_disk(subfolder, name)
        return found is None or self.manifest.owns(self.folder, f"{subfolder}/{found}")

    def _claim(self, path: str) -> str:
        self.claimed.add(path.casefold())
        return path

    def assign(self, items: Sequence[_Item]) -> dict[str, str]:
        chosen: dict[str, str] = {}
        for item in items:  # first the files kept: a new card must not take the name of one that stays
            before = self.manifest.files.get(item.key)
            if before is None:
                continue
            path = PurePosixPath(before)
            if str(path.parent) == item.folder and is_numbered(path.stem, item.stem) and self._free(before):
                chosen[item.key] = self._claim(before)
        for item in items:
            if item.key in chosen:
                continue
            fresh = next((p for p in (f"{item.folder}/{n}.md" for n in numbered(item.stem)) if self._free(p)), None)
            if fresh is None:
                raise SanError(
                    f"{self.folder.root / item.folder} holds {item.stem}.md and the names after it, up to "
                    f"{item.stem} ({MAX_SUFFIX}).md: export into another folder."
                )
            chosen[item.key] = self._claim(fresh)
        return chosen


def _open_folder(folder: Path) -> tuple[Confined, Manifest]:
    """The export's folder and its manifest; a file given for the folder, or a ``Cards``, ``TIL`` or manifest
    that is a link or a file of another kind, is refused before anything is written."""
    if folder.exists() and not folder.is_dir():
        raise SanError(f"{folder} is a file: give a folder to export into.")
    confined = Confined(folder)
    for subfolder in (CARDS_FOLDER, TIL_FOLDER):
        confined.folder(subfolder)
    with writing(folder, "the Markdown"):
        return confined, export_manifest.load(confined)


def _contents(
    cards: Sequence[ExportCard], tils: Sequence[ExportTil], paths: dict[str, str], zone: tzinfo
) -> dict[str, bytes]:
    by_day: dict[str, list[str]] = {}
    for card in cards:
        day = card.captured_at.astimezone(zone).date().isoformat()
        by_day.setdefault(day, []).append(PurePosixPath(paths[f"card:{card.id}"]).stem)
    stems = {card.id: PurePosixPath(paths[f"card:{card.id}"]).stem for card in cards}
    related = related_cards(cards)
    names = _vault_names(cards, paths)
    texts = {
        f"card:{card.id}": card_markdown(card, [stems[other] for other in related[card.id]], names) for card in cards
    }
    texts |= {f"til:{til.summary_id}": til_markdown(til, by_day.get(til.local_date, [])) for til in tils}
    return {key: text.encode("utf-8") for key, text in texts.items()}


def _holds(folder: Confined, path: str, data: bytes) -> bool:
    """Whether the regular file at ``path`` holds ``data`` already."""
    try:
        return folder.read(path, len(data)) == data
    except OSError:  # (larger than ``data``, or unreadable: written again)
        return False


@dataclass(frozen=True)
class _Plan:
    """What an export writes (item key -> path and bytes), leaves and removes."""

    paths: dict[str, str]
    contents: dict[str, bytes]
    owned: frozenset[str]  # files of earlier exports still as they wrote them (replaced or removed)
    unchanged: frozenset[str]  # keys whose file already holds their bytes
    removed: tuple[str, ...]  # files of an earlier export no item has now (a card renamed or gone, an export cut short)
    kept: tuple[str, ...]  # files of an earlier export someone edited since


def _plan(
    folder: Confined, manifest: Manifest, cards: Sequence[ExportCard], tils: Sequence[ExportTil], zone: tzinfo
) -> _Plan:
    items = [_Item(f"card:{card.id}", CARDS_FOLDER, safe_stem(card.title)) for card in cards]
    items += [_Item(f"til:{til.summary_id}", TIL_FOLDER, safe_stem(til.local_date)) for til in tils]
    paths = _Namer(folder, manifest).assign(items)
    contents = _contents(cards, tils, paths, zone)
    claimed = {path.casefold() for path in paths.values()}
    owned = frozenset(path for path in manifest.written if manifest.owns(folder, path))
    leaving = {path for path in manifest.files.values() if path.casefold() not in claimed and path not in owned}
    unchanged = frozenset(key for key, data in contents.items() if _holds(folder, paths[key], data))
    return _Plan(
        paths=paths,
        contents=contents,
        owned=owned,
        unchanged=unchanged,
        removed=tuple(sorted(path for path in owned if path.casefold() not in claimed)),
        kept=tuple(sorted(path for path in leaving if folder.status(path) is not None)),
    )


def export_markdown(
    db: Database, artifacts: ArtifactStore, folder: Path, zone: Callable[[], tzinfo], *, dry_run: bool = False
) -> MarkdownExport:
    """Write (or update) the export in ``folder``; ``zone`` is the learner's, which days cards belong to.
    ``dry_run``: say what it would write and remove, and write nothing."""
    cards, tils = read_cards(db), read_tils(db, artifacts)
    if not cards and not tils:
        raise NothingToExportError("cards or TIL notes")
    confined, manifest = _open_folder(folder)
    with writing(folder, "the Markdown"):  # (the folders are listed and files read: one may not be readable)
        plan = _plan(confined, manifest, cards, tils, zone())
    changed = [key for key in plan.contents if key not in plan.unchanged]
    result = MarkdownExport(
        folder, len(cards), len(tils), len(changed), len(plan.unchanged), len(plan.removed), plan.kept, dry_run
    )
    if dry_run:
        return result
    files = {key: (plan.paths[key], digest(data)) for key, data in plan.contents.items()}
    with writing(folder, "the Markdown"):
        folder.mkdir(parents=True, exist_ok=True)
        for subfolder in (CARDS_FOLDER, TIL_FOLDER):
            confined.make_folder(subfolder)
        # first say which files are about to be written, with what they replace (see export_manifest)
        pending = [(path, sha) for path in sorted(plan.owned) for sha in manifest.written[path]]
        export_manifest.save(confined, files, pending)
        # a name the namer chose is free or an earlier export's (the same to Windows and macOS in another case)
        replaced = {path.casefold() for path in plan.owned}
        for key in changed:
            path = plan.paths[key]
            try:
                confined.write(path, plan.contents[key], overwrite=path.casefold() in replaced)
            except TargetExistsError:
                raise SanError(
                    f"{folder / path} appeared while the export was being written: it was kept. Export again "
                    "(the next export gives the card another name)."
                ) from None
        for path in plan.removed:
            confined.remove(path)
        export_manifest.save(confined, files)
    return result
