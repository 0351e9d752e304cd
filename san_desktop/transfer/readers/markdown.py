"""A folder of Markdown or text notes, or an Obsidian vault: one item per note (``readers.notes`` reads each).
Attachments and unreadable notes are refused, each with why;
hidden files and folders (``.obsidian/``, ``.trash/``, ``.git/``) are passed over without a word.

The walk is bounded (DESIGN 12), so that a folder named by mistake (a home folder, ``/``, a synced drive) is
refused with a sentence instead of freezing the dialog or filling the memory: at most ``MAX_ENTRIES`` files and
folders, ``MAX_DEPTH`` folders deep, ``MAX_NOTES_BYTES`` of notes and ``MAX_SECONDS`` of reading. A walk past a
bound imports nothing (a vault cut off at some note would be a surprise later); a cancel is seen at each name.

Nothing outside the folder is read: a link is followed only to a note inside it (a linked folder never, so a
link loop cannot trap the walk), and pipes, sockets and devices are not opened; each is left out with why
(``core.user_files`` checks every part of each path)."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from san_desktop.core.errors import SanError
from san_desktop.core.text import RejectedContentError, format_size
from san_desktop.core.user_files import Confined, kind_of
from san_desktop.transfer.items import ImportKind, ImportPlan, Refusal
from san_desktop.transfer.readers._common import Ticker
from san_desktop.transfer.readers.notes import read_note

NOTE_SUFFIXES = frozenset({".md", ".markdown", ".txt"})

# Bounds no real vault comes near (the largest hold tens of thousands of notes, a dozen folders deep, a few
# hundred MB of text), each a sentence when reached.
MAX_ENTRIES = 100_000  # files and folders listed (attachments and hidden names too: each costs the walk)
MAX_DEPTH = 64  # folders below the one named (a chain of links cannot add to it: linked folders are not entered)
MAX_NOTES_BYTES = 500_000_000  # of the notes read, held in memory until the import stores them
MAX_SECONDS = 600.0  # a slow network drive


class FolderTooLargeError(SanError):
    """The folder named for an import is past one of the walk's bounds: nothing is imported."""


def read_markdown(folder: Path, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.MARKDOWN, source=str(folder))
    root = Confined(folder.resolve())  # the folder the person named, reached through their own links once
    walk = _Walk(folder, root.root, ticker)
    for path in walk.files(root.root):
        ticker.tick()
        walk.check()
        ref = path.relative_to(root.root).as_posix()
        note, reason = _note_path(root, ref)
        if note is None:
            plan.refused.append(Refusal(ref, reason))
        elif note.suffix.lower() not in NOTE_SUFFIXES:
            plan.refused.append(Refusal(ref, "an attachment, not a note"))
        else:
            try:
                item = read_note(note, ref, max_bytes, vault=str(root.root))
            except RejectedContentError as exc:
                plan.refused.append(Refusal(ref, str(exc)))
            else:
                walk.hold(len(item.content.encode("utf-8")))
                plan.items.append(item)
    ticker.finish()
    return plan


def _note_path(root: Confined, ref: str) -> tuple[Path | None, str]:
    """The regular file inside ``root`` that ``ref`` is or links to, else None and why it is left out."""
    found = root.status(ref)  # (every folder on the way checked: none is a link)
    path = root.path(ref)
    if found is None:
        return None, "gone while the folder was read"
    if stat.S_ISLNK(found.st_mode):
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root.root):
            return None, "a link out of the folder, not followed"
        found = root.status(target.relative_to(root.root).as_posix())
        if found is None:
            return None, "a link to nothing (its target is missing), not followed"
        if stat.S_ISDIR(found.st_mode):
            return None, "a link to a folder, not followed"
        path = target
    if stat.S_ISDIR(found.st_mode):
        return None, "a folder that could not be read"
    if not stat.S_ISREG(found.st_mode):
        return None, f"{kind_of(found.st_mode)}, not a note: not read"
    return path, ""


class _Walk:
    """Every file under a folder in a stable order (names sorted, a folder's files before its subfolders),
    hidden names left out, within the bounds. Linked folders are yielded, not entered, so a link loop cannot
    trap the walk; so is a subfolder that cannot be listed, to be refused by name."""

    def __init__(self, named: Path, root: Path, ticker: Ticker) -> None:
        self.named = named  # as the person named it, for the sentences
        self.root = root
        self.ticker = ticker
        self.entries = 0
        self.held = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def files(self, folder: Path, depth: int = 0) -> Iterator[Path]:
        self.check()  # (a tree of empty folders has no entries to look at the cancel between)
        try:
            entries = self._listing(folder)
        except OSError as exc:
            if depth == 0:
                raise SanError(f"Could not read the folder {folder}: {exc.strerror or exc}.") from exc
            yield folder
            return
        subfolders = []
        for entry in entries:
            if _is_folder(entry):
                subfolders.append(Path(entry.path))
            else:
                yield Path(entry.path)
        for subfolder in subfolders:
            if depth + 1 > MAX_DEPTH:
                top = subfolder.relative_to(self.root).parts[0]
                raise FolderTooLargeError(
                    f"{self.named} has folders nested more than {MAX_DEPTH} deep (in {top}), more than a folder "
                    "of notes holds, so nothing was imported. Choose the folder of the notes itself."
                )
            yield from self.files(subfolder, depth + 1)

    def _listing(self, folder: Path) -> list[os.DirEntry[str]]:
        """The names of ``folder`` but hidden ones, sorted, each counted (and a cancel or the time looked at)
        as it is listed: a folder of millions stops at the bound, not after all of them are in memory."""
        kept = []
        with os.scandir(folder) as listing:
            for entry in listing:
                self._count()
                if not entry.name.startswith("."):
                    kept.append(entry)
        return sorted(kept, key=lambda entry: entry.name)

    def _count(self) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise FolderTooLargeError(
                f"{self.named} holds more than {MAX_ENTRIES:,} files and folders: more than a folder of notes "
                "holds, so nothing was imported. Choose the folder of the notes itself (the vault, not the "
                "folder it is in), or import it a part at a time."
            )
        self.check()

    def check(self) -> None:
        """Stop if the person cancelled, or when the walk's time is up."""
        self.ticker.check()
        if time.monotonic() >= self.deadline:
            raise FolderTooLargeError(
                f"Reading {self.named} took longer than {MAX_SECONDS / 60:g} minutes, so nothing was imported. "
                "Choose a smaller folder, or copy it to this computer's own disk first."
            )

    def hold(self, size: int) -> None:
        """Count ``size`` bytes of note text kept for the import."""
        self.held += size
        if self.held > MAX_NOTES_BYTES:
            raise FolderTooLargeError(
                f"The notes in {self.named} add up to more than {format_size(MAX_NOTES_BYTES)}, more than one "
                "import holds, so nothing was imported. Import it a part at a time (one subfolder, then the next)."
            )


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """A folder itself (a link to one is not: it is judged, not entered)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False  # (judged by name, and refused, as the file it then seems to be)
