"""Generated files under the data directory, named ``{target_id}_v{version}_{run_id}.{ext}``.

A retry or a second run never writes to another run's path, so it can neither overwrite nor clean up
what another run published. A run that fails before publishing deletes exactly the files it wrote; a
crash leaves them to ``sweep_orphans``, which removes files no database row references once they are
old enough that no live run can still be about to publish them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

ARTIFACT_DIR = "artifacts"
_SAFE_PART = re.compile(r"^[A-Za-z0-9._-]+$")


def artifact_name(target_id: str, version: int, run_id: str, ext: str) -> str:
    for part in (target_id, run_id, ext):
        if not _SAFE_PART.match(part):
            raise ValueError(f"not a safe file name part: {part!r}")
    return f"{target_id}_v{version}_{run_id}.{ext}"


def check_kind(kind: str) -> None:
    if not _SAFE_PART.match(kind):
        raise ValueError(f"not a safe folder name: {kind!r}")


class ArtifactStore:
    """The artifacts folder of one data directory; keys are paths relative to it (``til/<name>``)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / ARTIFACT_DIR

    def path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"artifact key outside the artifacts folder: {key!r}")
        return path

    def read_text(self, key: str) -> str:
        return self.path(key).read_text(encoding="utf-8")

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def delete(self, key: str) -> None:
        """Remove a published file no row refers to any more (gone already: nothing to do)."""
        self.path(key).unlink(missing_ok=True)

    def read_bytes(self, key: str) -> bytes:
        return self.path(key).read_bytes()

    def run(self, run_id: str) -> RunFiles:
        return RunFiles(self, run_id)

    def sweep_orphans(self, referenced: Collection[str], older_than_seconds: float = 86_400.0) -> list[str]:
        """Delete files (and left-over temporary files) that no database row references and that are
        older than ``older_than_seconds``; returns the keys removed."""
        if not self.root.exists():
            return []
        cutoff = time.time() - older_than_seconds
        removed = []
        for path in sorted(self.root.rglob("*")):
            if not path.is_file():
                continue
            key = path.relative_to(self.root).as_posix()
            try:
                if key in referenced or path.stat().st_mtime > cutoff:
                    continue
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(key)
        if removed:
            log.info("Removed %d artifact file(s) that no record references: %s", len(removed), removed[:20])
        return removed


@dataclass
class RunFiles:
    """The files one run writes. ``publish_pending`` marks them kept (their rows committed);
    ``discard`` deletes the ones never published, and nothing else."""

    store: ArtifactStore
    run_id: str
    _pending: list[Path] = field(default_factory=list)
    _kept: list[Path] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def write_text(self, kind: str, target_id: str, version: int, ext: str, text: str) -> str:
        return self.write_bytes(kind, target_id, version, ext, text.encode("utf-8"))

    def write_bytes(self, kind: str, target_id: str, version: int, ext: str, data: bytes) -> str:
        """Write atomically (a temporary file, then linked to its name) under a name no other run can have;
        a name this run already wrote is refused, never overwritten."""
        check_kind(kind)
        folder = self.store.root / kind
        folder.mkdir(parents=True, exist_ok=True)
        name = artifact_name(target_id, version, self.run_id, ext)
        final = folder / name
        temporary = folder / f".{name}.tmp"
        with self._lock:
            self._pending.append(final)
        try:
            with temporary.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.link(temporary, final)  # (unlike a rename, fails when the name is taken)
        except FileExistsError:
            raise ValueError(f"{kind}/{name} was already written by this run") from None
        finally:
            temporary.unlink(missing_ok=True)
        return f"{kind}/{name}"

    @property
    def written(self) -> list[Path]:
        with self._lock:
            return [*self._kept, *self._pending]

    def publish_pending(self) -> None:
        """The rows that reference the files written so far committed: they are the record's now."""
        with self._lock:
            self._kept.extend(self._pending)
            self._pending.clear()

    def discard(self) -> list[Path]:
        """Delete the files this run wrote and never published (only those)."""
        with self._lock:
            pending, self._pending = self._pending, []
        for path in pending:
            path.unlink(missing_ok=True)
        if pending:
            log.info("Run %s deleted %d unpublished file(s)", self.run_id, len(pending))
        return pending
