"""The one policy for what SAN Desktop writes into a repository it does not own: paths, the path template,
branch names and repository names (issue 23, items 1, 4, 6 and 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from san_desktop.core.repo_paths import (
    MAX_PART_BYTES,
    check_branch_name,
    check_repo_path,
    check_repository_name,
    parse_template,
    path_candidates,
    with_suffix,
)
from san_desktop.core.settings import Settings, with_value


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("a//b.md", "empty part"),
        ("/TIL/x.md", "starts with '/'"),
        ("TIL/", "ends with '/'"),
        ("", "empty"),
        ("../../x.md", "'..' part"),
        ("a/../../b.md", "'..' part"),
        ("../../../../x.md", "'..' part"),
        ("TIL/./x.md", "'.' part"),
        ("TIL/\x00x.md", "control character"),
        ("TIL/x\n.md", "control character"),
        ("TIL/x\u202emd.txt", "control character"),  # right-to-left override
        (".git/hooks/pre-commit", "git's own folder"),
        (".GIT/config", "git's own folder"),
        ("TIL/.git./x.md", "git's own folder"),  # NTFS drops the trailing dot
        ("TIL/git~1/x.md", "git's own folder"),  # NTFS 8.3 name
        ("TIL/.g\u200cit/x.md", "git's own folder"),  # HFS+ ignores the joiner
        (".git\u200d/x.md", "git's own folder"),
        ("TIL/a:b.md", "Windows cannot store"),
        ("TIL\\x.md", "Windows cannot store"),
        ("TIL/notes./x.md", "ending with a dot"),
        ("TIL/" + "x" * (MAX_PART_BYTES + 1), f"longer than {MAX_PART_BYTES} bytes"),
        ("a/" * 600 + "x.md", "longer than 1024 bytes"),
    ],
)
def test_a_path_that_would_harm_a_repository_is_refused_saying_why(path: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")) as refused:
        check_repo_path(path)
    assert "\x00" not in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "path",
    [
        "CON.md",
        "TIL/nul.txt",
        "TIL/com1.md",
        "TIL/Com1.tar.gz",
        "aux/2026/x.md",
        "TIL/LPT9.md",
        "TIL/prn",
        "TIL/con .md",  # Windows drops the space before the dot
        "TIL/conin$.md",
        "TIL/COM\u00b9.md",  # COM¹: Windows takes the superscript digits too
    ],
)
def test_a_name_windows_keeps_for_a_device_is_refused_in_any_part_case_and_extension(path: str) -> None:
    device = next(
        part
        for part in path.split("/")
        if part.split(".")[0].strip().upper()[:3] in ("CON", "NUL", "COM", "AUX", "LPT", "PRN")
    )
    with pytest.raises(ValueError, match="has a part Windows keeps for a device") as refused:
        check_repo_path(path)
    assert f"({device!r}: CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension)" in str(refused.value)


def test_a_template_naming_a_device_is_refused_when_parsed() -> None:
    with pytest.raises(ValueError, match=r"gives a path that cannot be written: .* keeps for a device"):
        parse_template("TIL/{date}/NUL.md")


@pytest.mark.parametrize(
    "path",
    [
        "TIL/2026/12/01/raft.md",
        "TIL/2026/12/01/리액트-훅.md",
        "notes.md",
        ".github/x.md",
        "TIL/CONSOLE.md",
        "TIL/com10.md",
        "TIL/nullable.md",
        "TIL/a.con",
    ],
)
def test_ordinary_paths_pass(path: str) -> None:
    assert check_repo_path(path) == path


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{slug:>50000000}.md", "write {slug}"),
        ("{slug.__class__.__mro__}", "write {slug}"),
        ("TIL/{slug[0]}.md", "write {slug}"),
        ("TIL/{slug!r}.md", "write {slug}"),
        ("{foo}.md", "unknown field '{foo}'"),
        ("{0}.md", "unknown field '{0}'"),
        ("{", "never closed"),
        ("TIL/}{slug}.md", "without its '{'"),
        ("a//{slug}.md", "empty part"),
        ("TIL/\x00{slug}.md", "control character"),
        ("../../{slug}.md", "'..' part"),
        (".git/hooks/{slug}", "git's own folder"),
        ("TIL/{yyyy}/{mm}/notes.md", "same file every day"),
        ("TIL/" + "x" * 300 + "/{slug}.md", "longer than 200 characters"),
    ],
)
def test_a_template_is_parsed_once_and_refused_with_its_reason(template: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")):
        parse_template(template)


def test_a_template_renders_its_fields_and_nothing_else() -> None:
    template = parse_template("TIL/{yyyy}/{mm}/{dd}/{{{date}}}-{slug}.md")
    assert template.render("2026-03-07", "raft") == "TIL/2026/03/07/{2026-03-07}-raft.md"


@given(st.text(max_size=40))
def test_whatever_a_template_says_it_never_gives_a_path_the_policy_refuses(template: str) -> None:
    try:
        parsed = parse_template(template)
    except ValueError:
        return
    check_repo_path(parsed.render("2026-01-31", "a-b"))  # raises if the template let a bad path through


@given(st.text(min_size=1, max_size=60))
def test_a_path_that_passes_has_no_empty_dot_or_git_part(path: str) -> None:
    try:
        check_repo_path(path)
    except ValueError:
        return
    parts = path.split("/")
    assert all(parts)
    assert not {".", ".."} & set(parts)
    assert all(part.lower().rstrip(". ") != ".git" for part in parts)
    assert not any(ord(char) < 32 for char in path)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("HEAD", "not a branch name"),
        ("-til", "not a branch name"),
        ("@", "not a branch name"),
        ("../../config", "'..'"),
        ("til.lock", ".lock"),
        ("a//b", "empty part"),
        ("/til", "empty part"),
        ("til.", "ends with a dot"),
        ("my til", "space"),
        ("til~1", "space or one of"),
        ("ti\x00l", "control character"),
        ("til@{1}", "'@{'"),
        (".hidden", "starts with a dot"),
        ("", "empty"),
    ],
)
def test_branch_names_follow_git_check_ref_format(name: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("{", r"\{").replace("(", r"\(")):
        check_branch_name(name)


@pytest.mark.parametrize("name", ["til", "main", "notes/til", "til-2026", "학습"])
def test_ordinary_branch_names_pass(name: str) -> None:
    assert check_branch_name(name) == name


@pytest.mark.parametrize("name", ["owner/..", "owner/.", "../til", "owner/til/x", "owner", "own er/til", "-x/til"])
def test_a_repository_must_be_owner_and_name(name: str) -> None:
    with pytest.raises(ValueError, match="is not owner/name"):
        check_repository_name(name)


def test_the_settings_refuse_them_by_the_same_rules() -> None:
    for key, value, why in (
        ("repository", "owner/..", "is not owner/name"),
        ("local_branch", "HEAD", "not a branch name"),
        ("branch", "../../config", "'..'"),
        ("path_template", "{slug:>50000000}.md", "write {slug}"),
        ("path_template", "{", "never closed"),
    ):
        with pytest.raises(ValueError, match=f"github.{key}: .*{why.replace('{', '[{]').replace('(', '[(]')}"):
            with_value(Settings(), "github", key, value)
    assert with_value(Settings(), "github", "repository", "").github.repository == ""  # not set


def test_a_taken_name_is_tried_with_suffixes_in_its_last_part() -> None:
    assert with_suffix("TIL/2026/03/07/raft.md", 1) == "TIL/2026/03/07/raft-1.md"
    assert with_suffix("TIL/notes", 20) == "TIL/notes-20"
    assert with_suffix("TIL.d/notes", 2) == "TIL.d/notes-2"  # the folder's dot is not an extension
    assert with_suffix("TIL/.notes", 3) == "TIL/.notes-3"
    candidates = path_candidates("TIL/x.md")
    assert candidates[0] == "TIL/x.md"
    assert candidates[-1] == "TIL/x-20.md"
    assert len(candidates) == 21
    assert path_candidates("TIL/" + "x" * MAX_PART_BYTES) == ["TIL/" + "x" * MAX_PART_BYTES]  # no longer name fits
