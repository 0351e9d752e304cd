"""Where a TIL's file goes in a repository SAN Desktop does not own: one decision for GitHub and local git,
made by the commit job and shown before committing (the review window's preview) alike.

The path asked for is taken when nothing is there, when this very content is there already (nothing is
committed twice), or when the file there is one this TIL wrote (``replaceable``: its earlier version,
unchanged since). Anything else there (a file someone else wrote or edited, a folder, a link, a
submodule) is never replaced: the next name is tried (-1 … -20)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from san_desktop.core.errors import PermanentError
from san_desktop.core.repo_paths import MAX_SUFFIX, path_candidates, shown


class Spot(enum.Enum):
    NEW = "new"  # nothing is at the path: the file is created
    REPLACE = "replace"  # this TIL's own earlier file: the new version replaces it
    SAME = "same"  # this content is there already: nothing to commit


@dataclass(frozen=True)
class Occupant:
    """What is at a path: a file (its content, and the blob sha a replacement names) or something else."""

    is_file: bool
    content: bytes = b""
    sha: str = ""


@dataclass(frozen=True)
class Placement:
    asked: str
    path: str  # where the file goes
    spot: Spot
    sha: str = ""  # of the file found at ``path`` (REPLACE, SAME)

    @property
    def moved(self) -> bool:
        """The path asked for was taken by something SAN Desktop does not replace."""
        return self.path != self.asked


class PathsTakenError(PermanentError):
    pass


def place(
    asked: str,
    content: bytes,
    look: Callable[[str], Occupant | None],
    replaceable: Callable[[str, bytes], bool],
    where: str,
) -> Placement:
    """The first name for ``asked`` that ``content`` may go to, looking at each with ``look`` (None:
    nothing there). ``where`` ("on the branch til") ends the message when every name is taken."""
    for candidate in path_candidates(asked):
        found = look(candidate)
        if found is None:
            return Placement(asked, candidate, Spot.NEW)
        if not found.is_file:
            continue  # a folder, a link or a submodule: never replaced
        if found.content == content:
            return Placement(asked, candidate, Spot.SAME, found.sha)
        if replaceable(candidate, found.content):
            return Placement(asked, candidate, Spot.REPLACE, found.sha)
    raise PathsTakenError(
        f"{shown(asked)} and the names after it (-1 … -{MAX_SUFFIX}) are all taken {where}: give another path."
    )
