"""Run-scoped files (DESIGN.md §4): a run never overwrites a file, its own included."""

from __future__ import annotations

from pathlib import Path

import pytest

from san_desktop.artifacts.store import ArtifactStore


def test_a_name_a_run_already_wrote_is_refused_and_the_first_file_kept(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path)
    files = store.run("01run")
    key = files.write_text("til", "summary", 1, "md", "the first text")
    with pytest.raises(ValueError, match="already written by this run"):
        files.write_text("til", "summary", 1, "md", "a second text")
    assert store.read_text(key) == "the first text"
    assert [p.name for p in store.path(key).parent.iterdir()] == [Path(key).name]  # no temporary left


def test_two_runs_write_the_same_item_side_by_side(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path)
    first = store.run("01a").write_text("til", "summary", 1, "md", "one")
    second = store.run("01b").write_text("til", "summary", 1, "md", "two")
    assert first != second
    assert (store.read_text(first), store.read_text(second)) == ("one", "two")
