"""A user's git repository made and checked with the real ``git``: what they have (commits, a modified, a
staged and an untracked file), ``git fsck --full --strict``, and a byte-for-byte picture of everything
SAN Desktop must leave alone."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,  # not the machine's ~/.gitconfig
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Me",
    "GIT_AUTHOR_EMAIL": "me@example.org",
    "GIT_COMMITTER_NAME": "Me",
    "GIT_COMMITTER_EMAIL": "me@example.org",
}


def git(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, check=check, env={**os.environ, **GIT_ENV}
    )


def user_repository(path: Path) -> Path:
    """A clone as people have them: two commits on main (README.md and TIL/keep.md), then a modified
    file, a staged one and an untracked one."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("my notes\n", encoding="utf-8")
    (path / "TIL").mkdir()
    (path / "TIL" / "keep.md").write_text("# a note I wrote myself\n", encoding="utf-8")
    git(path, "add", "README.md", "TIL/keep.md")
    git(path, "commit", "-q", "-m", "start")
    (path / "README.md").write_text("my notes, edited\n", encoding="utf-8")
    (path / "staged.md").write_text("staged\n", encoding="utf-8")
    git(path, "add", "staged.md")
    (path / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    return path


def fsck_problems(folder: Path) -> str:
    """What ``git fsck --full --strict`` says is wrong (empty when the repository is sound)."""
    result = git(folder, "fsck", "--full", "--strict", "--no-dangling", check=False)
    said = (result.stdout + result.stderr).strip()
    return said if result.returncode != 0 or said else ""


def untouchable(folder: Path, branch: str) -> dict[str, bytes]:
    """Every file of a work tree and its git folder that committing to ``branch`` must not change: the
    files, the index, HEAD, config, hooks, other branches, linked work trees' state. Left out: the object
    store (new objects are added), and ``branch``'s own ref and reflog."""
    git_dir = ".git/" if (folder / ".git").is_dir() else ""  # a bare repository is its git folder
    left_out = (f"{git_dir}objects/", f"{git_dir}logs/", f"{git_dir}refs/heads/{branch}")
    found: dict[str, bytes] = {}
    for item in sorted(folder.rglob("*")):
        relative = item.relative_to(folder).as_posix()
        if item.is_file() and not relative.startswith(left_out):
            found[relative] = item.read_bytes()
    return found


def file_on(folder: Path, branch: str, path: str) -> bytes | None:
    result = subprocess.run(
        ["git", "show", f"{branch}:{path}"], cwd=folder, capture_output=True, check=False, env={**os.environ, **GIT_ENV}
    )
    return result.stdout if result.returncode == 0 else None


def branch_files(folder: Path, branch: str) -> list[str]:
    return git(folder, "ls-tree", "-r", "--name-only", branch).stdout.split()


@contextmanager
def unharmed(folder: Path, branch: str) -> Iterator[None]:
    """Asserts on leaving that ``git fsck --full --strict`` is clean and that everything ``untouchable``
    lists is byte-identical to what it was on entering."""
    before = untouchable(folder, branch)
    yield
    assert fsck_problems(folder) == ""
    assert untouchable(folder, branch) == before


def commit_on_branch(repo: Path, branch: str, path: str, content: bytes) -> None:
    """What a person does on a branch without checking it out (plumbing, as git's own scripts do)."""
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(repo / ".git" / "side-index")}

    def run(*args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, check=True, env=env)
        return done.stdout.decode().strip()

    run("read-tree", branch)
    blob = run("hash-object", "-w", "--stdin", stdin=content)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    commit = run("commit-tree", run("write-tree"), "-p", branch, "-m", "my own edit")
    run("update-ref", f"refs/heads/{branch}", commit)
    (repo / ".git" / "side-index").unlink()
