"""Which files of an export folder this export wrote (``.san-export.json``), so exporting again replaces
them and nothing else: a file is this export's when the manifest names it and its content is still what
was written (its SHA-256). A file someone edited since, or put there, is theirs and never replaced,
renamed or deleted.

The manifest is written twice: before the files (naming both the files about to be written and the ones
they replace) and after; an export cut short leaves every file it touched recognisable as its own.

Every path is read, written and removed through ``core.user_files.Confined``: a manifest written by hand,
or a ``Cards`` folder that is a link, cannot make an export touch a file outside its folder."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field

from san_desktop.core.errors import SanError
from san_desktop.core.user_files import Confined, kind_of

MANIFEST_NAME = ".san-export.json"
FORMAT = 1
# what a manifest may name: one file directly in one of the export's folders (a manifest written by hand
# cannot make an export delete a file elsewhere)
_OWN_PATH = re.compile(r"(?:Cards|TIL)/[^/\\]+\.md")
MANIFEST_MAX_BYTES = 64_000_000  # a manifest of 200,000 cards; a larger one was not written by an export
FILE_MAX_BYTES = 16_000_000  # a card or a day as a file; a larger file there is not one an export wrote

log = logging.getLogger(__name__)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Manifest:
    files: dict[str, str] = field(default_factory=dict)  # item key ("card:<id>", "til:<id>") -> path
    written: dict[str, set[str]] = field(default_factory=dict)  # path -> digests of what was written there

    def owns(self, folder: Confined, path: str) -> bool:
        """Whether the file at ``path`` (relative, POSIX) is one this export wrote, unchanged since: a regular
        file (not a link), reached through no link."""
        if path not in self.written:
            return False
        try:
            data = folder.read(path, FILE_MAX_BYTES)
        except OSError:
            return False
        return data is not None and digest(data) in self.written[path]


def load(folder: Confined) -> Manifest:
    """The folder's manifest; an empty one when there is none or it cannot be read (then every file
    there is someone else's: nothing is replaced). A link or anything else that is no file in its place
    is refused: the export would replace it."""
    found = folder.status(MANIFEST_NAME)
    if found is None:
        return Manifest()
    if not stat.S_ISREG(found.st_mode):
        raise SanError(
            f"{folder.root / MANIFEST_NAME} is {kind_of(found.st_mode)}, not the list of files SAN Desktop keeps "
            "there: nothing was changed. Remove it, or choose another folder."
        )
    try:
        data = json.loads((folder.read(MANIFEST_NAME, MANIFEST_MAX_BYTES) or b"").decode("utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s): every file in %s is left as it is", MANIFEST_NAME, exc, folder.root)
        return Manifest()
    manifest = Manifest()
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return manifest
    entries = [(key, item) for key, item in (data.get("files") or {}).items()]
    entries += [("", item) for item in data.get("pending") or []]
    for key, item in entries:
        if not isinstance(item, dict):
            continue
        path, sha = item.get("path"), item.get("sha256")
        if not isinstance(path, str) or not isinstance(sha, str) or not _OWN_PATH.fullmatch(path):
            continue
        if key:
            manifest.files[key] = path
        manifest.written.setdefault(path, set()).add(sha)
    return manifest


def save(folder: Confined, files: dict[str, tuple[str, str]], pending: Sequence[tuple[str, str]] = ()) -> None:
    """``files``: item key -> (path, digest); ``pending``: (path, digest) of files still being replaced."""
    data = {
        "format": FORMAT,
        "written_by": "SAN Desktop",
        "files": {key: {"path": path, "sha256": sha} for key, (path, sha) in sorted(files.items())},
        "pending": [{"path": path, "sha256": sha} for path, sha in pending],
    }
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    folder.write(MANIFEST_NAME, text.encode("utf-8"), overwrite=True)
