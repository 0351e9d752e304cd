"""Where a TIL's file goes: nothing there, this content there, its own earlier file there, or something
else there (passed over, never replaced)."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from san_desktop.core.placement import Occupant, PathsTakenError, Placement, Spot, place
from san_desktop.core.repo_paths import MAX_SUFFIX

CONTENT = b"# TIL\n"


def _place(repository: dict[str, Occupant], written: Collection[tuple[str, bytes]] = ()) -> Placement:
    return place("TIL/x.md", CONTENT, repository.get, lambda path, existing: (path, existing) in written, "here")


def test_a_free_path_is_taken_as_asked() -> None:
    assert _place({}) == Placement("TIL/x.md", "TIL/x.md", Spot.NEW)


def test_the_same_content_there_is_not_committed_again() -> None:
    found = _place({"TIL/x.md": Occupant(True, CONTENT, "abc")})
    assert (found.path, found.spot, found.sha, found.moved) == ("TIL/x.md", Spot.SAME, "abc", False)


def test_its_own_earlier_file_is_replaced() -> None:
    found = _place({"TIL/x.md": Occupant(True, b"old", "abc")}, {("TIL/x.md", b"old")})
    assert (found.path, found.spot, found.sha) == ("TIL/x.md", Spot.REPLACE, "abc")


def test_a_file_someone_else_wrote_or_a_folder_is_passed_over() -> None:
    found = _place({"TIL/x.md": Occupant(True, b"theirs", "abc"), "TIL/x-1.md": Occupant(False)})
    assert (found.path, found.spot, found.moved) == ("TIL/x-2.md", Spot.NEW, True)


def test_its_own_file_edited_since_is_not_replaced() -> None:
    found = _place({"TIL/x.md": Occupant(True, b"old, edited", "abc")}, {("TIL/x.md", b"old")})
    assert (found.path, found.spot) == ("TIL/x-1.md", Spot.NEW)


def test_every_name_taken_says_what_to_do() -> None:
    taken = {"TIL/x.md": Occupant(False)} | {f"TIL/x-{n}.md": Occupant(False) for n in range(1, MAX_SUFFIX + 1)}
    with pytest.raises(PathsTakenError, match=r"'TIL/x.md' and the names after it \(-1 … -20\) are all taken here"):
        _place(taken)
