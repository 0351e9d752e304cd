"""Which files of an export folder this export wrote (``.san-export.json``), so exporting again replaces
them and nothing else: a file is this export's when the manifest names it and its content is still what
was written (its SHA-256). A file someone edited since, or put there, is theirs and never replaced,
renamed or deleted.

The manifest is written twice: before the files (naming both the files about to be written and the ones
they replace) and after; an export cut short leaves every file it touched recognisable as its own."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from san_desktop.transfer.files import write_bytes_atomically

MANIFEST_NAME = ".san-export.json"
FORMAT = 1
# what a manifest may name: one file directly in one of the export's folders (a manifest written by hand
# cannot make an export delete a file elsewhere)
_OWN_PATH = re.compile(r"(?:Cards|TIL)/[^/\\]+\.md")

log = logging.getLogger(__name__)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Manifest:
    files: dict[str, str] = field(default_factory=dict)  # item key ("card:<id>", "til:<id>") -> path
    written: dict[str, set[str]] = field(default_factory=dict)  # path -> digests of what was written there

    def owns(self, folder: Path, path: str) -> bool:
        """Whether the file at ``path`` (relative, POSIX) is one this export wrote, unchanged since."""
        target = folder / path
        if path not in self.written or target.is_symlink() or not target.is_file():
            return False
        try:
            return digest(target.read_bytes()) in self.written[path]
        except OSError:
            return False


def load(folder: Path) -> Manifest:
    """The folder's manifest; an empty one when there is none or it cannot be read (then every file
    there is someone else's: nothing is replaced)."""
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Manifest()
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s): every file in %s is left as it is", MANIFEST_NAME, exc, folder)
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


def save(folder: Path, files: dict[str, tuple[str, str]], pending: Sequence[tuple[str, str]] = ()) -> None:
    """``files``: item key -> (path, digest); ``pending``: (path, digest) of files still being replaced."""
    data = {
        "format": FORMAT,
        "written_by": "SAN Desktop",
        "files": {key: {"path": path, "sha256": sha} for key, (path, sha) in sorted(files.items())},
        "pending": [{"path": path, "sha256": sha} for path, sha in pending],
    }
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    write_bytes_atomically(folder / MANIFEST_NAME, text.encode("utf-8"))
