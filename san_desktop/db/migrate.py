"""The schema's revisions, shared by both backends: the Alembic configuration, the revisions shipped, where a
migration ended (``MigrationResult``). Each backend brings its database to head its own way
(``db.backends.sqlite.migrate``, ``db.backends.postgres.server``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory


@dataclass(frozen=True)
class MigrationResult:
    previous: str | None  # None: a new database
    head: str
    backup: Path | None

    @property
    def upgraded(self) -> bool:
        return self.previous != self.head


def alembic_config() -> Config:
    """Alembic configuration pointing at the scripts shipped in the package (works when installed)."""
    from alembic.config import Config  # alembic (and mako) load only when a migration runs

    config = Config()
    config.set_main_option("script_location", str(files("san_desktop.migrations")))
    return config


def script_directory() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


_REVISION_LINE = re.compile(r'^revision: str = "([^"]+)"$', re.M)
_DOWN_LINE = re.compile(r'^down_revision: str \| None = (?:"([^"]+)"|None)$', re.M)


@functools.cache
def _revision_chain() -> tuple[str, ...]:
    """The revisions shipped, oldest first, read from the scripts' own header lines: knowing where a
    database stands needs no Alembic import (a sixth of a command line call's start-up). A test checks
    this against Alembic's own reading."""
    parents: dict[str, str | None] = {}
    for script in files("san_desktop.migrations").joinpath("versions").iterdir():
        if not script.name.endswith(".py") or script.name.startswith("__"):
            continue
        text = script.read_text(encoding="utf-8")
        revision, down = _REVISION_LINE.search(text), _DOWN_LINE.search(text)
        if revision and down:
            parents[revision.group(1)] = down.group(1)
    chain: list[str] = []
    current: str | None = next(rev for rev, parent in parents.items() if parent is None)
    children = {parent: rev for rev, parent in parents.items()}
    while current is not None:
        chain.append(current)
        current = children.get(current)
    return tuple(chain)


def head_revision() -> str:
    return _revision_chain()[-1]


def known_revisions() -> frozenset[str]:
    return frozenset(_revision_chain())
