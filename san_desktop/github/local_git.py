"""Committing one file to a branch of a local git repository with dulwich (no git binary needed).

Only the TIL file goes into the commit, built from the branch's own tree: no work tree and no index is
ever read or written, so the user's modified, staged and untracked files stay exactly as they were. A
branch checked out in any work tree of the repository (the main one or a linked one) is refused:
committing to it would leave that checkout behind its branch, its files shown as deleted.

Nothing the user made is replaced: the path and the branch name pass ``core.repo_paths``; a file at the
path that SAN Desktop did not write there (``replaceable`` says which it did) makes it take the next free
name (-1 … -20), as on GitHub; a folder, a link or a submodule there is never touched (``core.placement``,
the decision ``place_file`` shows before committing). Every new tree
passes git's own object checks before the branch moves, and the branch moves only if no one else moved
it meanwhile. A retry finds its content already at the path and commits nothing twice.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from dulwich.config import ConfigFile
from dulwich.errors import NotGitRepository, ObjectFormatException
from dulwich.file import FileLocked
from dulwich.index import validate_path_element_hfs, validate_path_element_ntfs
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import HEADREF, Ref
from dulwich.repo import Repo

from san_desktop.core.errors import PermanentError, StorageFullError, TransientError
from san_desktop.core.placement import Occupant, Placement, Spot, place
from san_desktop.core.repo_paths import check_branch_name, check_repo_path, shown

T = TypeVar("T", bound=ShaFile)
FILE_MODE = 0o100644
TREE_MODE = 0o040000


@dataclass(frozen=True)
class LocalCommit:
    commit_sha: str
    path: str  # where the file went: the path asked for, or the next free one


def repository_problem(folder: str, setting: str = "github.local_repository") -> str | None:
    """Why ``folder`` cannot take commits (a sentence naming ``setting``, as the reader knows it: the key
    on the command line, the field in Settings), or None when it can."""
    if not folder:
        return f"No local git repository is set: set {setting} to a clone of your TIL repository."
    path = Path(folder)
    if not path.is_dir():
        return f"The folder {folder} does not exist: set {setting} to a clone of your TIL repository."
    try:
        Repo(str(path)).close()
    except NotGitRepository:
        return (
            f"The folder {folder} is not a git repository: set {setting} to the top folder of a clone of "
            "your TIL repository (the one holding .git)."
        )
    except OSError as exc:
        return f"The git repository in {folder} cannot be read ({exc.strerror or exc})."
    return None


def commit_file(
    repository: Path,
    branch: str,
    path: str,
    content: bytes,
    message: str,
    author_name: str = "",
    author_email: str = "",
    replaceable: Callable[[str, bytes], bool] = lambda _path, _content: False,
) -> LocalCommit:
    """Commit ``content`` at ``path`` on ``branch`` (made from HEAD if it does not exist yet), or at the
    next free name when a file SAN Desktop did not write is there (``replaceable(path, bytes)`` tells a file
    SAN Desktop wrote). Raises ``PermanentError`` saying what to do when it cannot, ``TransientError`` when
    another program holds the branch."""
    _check(repository, branch, path)
    try:
        with Repo(str(repository)) as repo:
            return _commit(repo, branch, path, content, message, author_name, author_email, replaceable)
    except FileLocked as exc:
        lock = os.fsdecode(exc.lockfilename)
        raise TransientError(
            f"The branch {branch} is locked by another git program ({lock} exists); SAN Desktop tries again. "
            "If no git program is running, delete that file."
        ) from None
    except OSError as exc:
        raise _write_error(repository, exc) from exc


def place_file(
    repository: Path,
    branch: str,
    path: str,
    content: bytes,
    replaceable: Callable[[str, bytes], bool] = lambda _path, _content: False,
) -> Placement:
    """Where ``commit_file`` would put ``content`` now (the same decision; nothing is written), for the
    review window to show before committing. Raises ``PermanentError`` as ``commit_file`` would."""
    _check(repository, branch, path)
    try:
        with Repo(str(repository)) as repo:
            ref = _branch_ref(repo, branch)
            return _place(repo, _base_tree(repo, ref), branch, path, content, replaceable)
    except OSError as exc:
        raise PermanentError(f"The git repository in {repository} cannot be read ({exc.strerror or exc}).") from exc


def _check(repository: Path, branch: str, path: str) -> None:
    try:
        check_branch_name(branch)
        check_repo_path(path)
    except ValueError as exc:
        raise PermanentError(str(exc)) from None
    problem = repository_problem(str(repository))
    if problem is not None:
        raise PermanentError(problem)


def _branch_ref(repo: Repo, branch: str) -> Ref:
    """The branch's ref, refused when a work tree has it checked out."""
    ref = Ref(b"refs/heads/" + branch.encode("utf-8"))
    where = _checked_out(repo).get(ref)
    if where is not None:
        raise PermanentError(
            f"The branch {branch} is checked out in {where}: SAN Desktop commits only to a branch that no work "
            "tree has checked out, so your index and files stay exactly as they are. Set github.local_branch "
            "to another branch (it is created from your HEAD) and merge it when you like."
        )
    return ref


def _base(repo: Repo, ref: Ref) -> ObjectID | None:
    """The commit a new one goes on: the branch's tip, or HEAD's when the branch is made by it."""
    return _ref(repo, ref) or _ref(repo, HEADREF)


def _base_tree(repo: Repo, ref: Ref) -> Tree:
    base = _base(repo, ref)
    return _as(Tree, repo[_as(Commit, repo[base]).tree]) if base else Tree()


def _place(
    repo: Repo, tree: Tree, branch: str, path: str, content: bytes, replaceable: Callable[[str, bytes], bool]
) -> Placement:
    def look(candidate: str) -> Occupant | None:
        found = _entry_at(repo, tree, _parts(candidate), branch, candidate)
        if found is None:
            return None
        mode, sha = found
        if not stat.S_ISREG(mode):
            return Occupant(is_file=False)
        return Occupant(True, _as(Blob, repo[sha]).data, sha.decode("ascii"))

    return place(path, content, look, replaceable, f"on the branch {branch}")


def _parts(path: str) -> list[bytes]:
    return [part.encode("utf-8") for part in path.split("/")]


def _commit(
    repo: Repo,
    branch: str,
    path: str,
    content: bytes,
    message: str,
    author_name: str,
    author_email: str,
    replaceable: Callable[[str, bytes], bool],
) -> LocalCommit:
    ref = _branch_ref(repo, branch)
    parent = _ref(repo, ref)
    base = _base(repo, ref)
    base_tree = _base_tree(repo, ref)
    placement = _place(repo, base_tree, branch, path, content, replaceable)
    if placement.spot is Spot.SAME and parent is not None:
        return LocalCommit(parent.decode("ascii"), placement.path)  # already there: no second commit
    blob = Blob.from_string(content)
    parts = _parts(placement.path)
    new_objects: list[ShaFile] = [blob]
    tree_id = _tree_with(repo, base_tree, parts, blob.id, new_objects)
    commit = _new_commit(repo, tree_id, [base] if base else [], message, author_name, author_email)
    new_objects.append(commit)
    _check_objects(new_objects, parts)
    for item in new_objects:
        repo.object_store.add_object(item)
    if not repo.refs.set_if_equals(ref, parent, commit.id):
        raise TransientError(f"The branch {branch} moved while SAN Desktop committed; it tries again")
    return LocalCommit(commit.id.decode("ascii"), placement.path)


def _entry_at(repo: Repo, tree: Tree, parts: list[bytes], branch: str, path: str) -> tuple[int, ObjectID] | None:
    """The (mode, sha) at ``parts`` below ``tree``, or None when nothing is there. A file, link or
    submodule where a folder of the path should be is refused: no other name would get past it."""
    for depth, name in enumerate(parts):
        if name not in tree:
            return None
        mode, sha = tree[name]
        if depth == len(parts) - 1:
            return mode, sha
        if not stat.S_ISDIR(mode):
            taken = b"/".join(parts[: depth + 1]).decode("utf-8")
            raise PermanentError(
                f"{taken} is a file on the branch {branch}, so {shown(path)} cannot be made below it: give "
                "another path."
            )
        tree = _as(Tree, repo[sha])
    return None


def _tree_with(repo: Repo, tree: Tree, parts: list[bytes], blob_id: ObjectID, made: list[ShaFile]) -> ObjectID:
    """A copy of ``tree`` with the blob at ``parts`` (new folders made as needed); the new trees are
    appended to ``made``, not stored."""
    copy = Tree()
    for entry in tree.items():
        copy.add(entry.path, entry.mode, entry.sha)
    name = parts[0]
    if len(parts) == 1:
        copy.add(name, FILE_MODE, blob_id)
    else:
        below = _as(Tree, repo[tree[name][1]]) if name in tree else Tree()
        copy.add(name, TREE_MODE, _tree_with(repo, below, parts[1:], blob_id, made))
    made.append(copy)
    return copy.id


def _new_commit(
    repo: Repo, tree_id: ObjectID, parents: list[ObjectID], message: str, author_name: str, author_email: str
) -> Commit:
    commit = Commit()
    commit.tree = tree_id
    commit.parents = parents
    config = repo.get_config_stack()
    name = author_name or _config(config, b"name") or "SAN Desktop"
    email = author_email or _config(config, b"email") or "san-desktop@localhost"
    commit.author = commit.committer = f"{name} <{email}>".encode()
    now = datetime.now().astimezone()
    commit.author_time = commit.commit_time = int(now.timestamp())
    offset = now.utcoffset()
    commit.author_timezone = commit.commit_timezone = int(offset.total_seconds()) if offset else 0
    commit.encoding = b"UTF-8"
    commit.message = message.encode("utf-8")
    return commit


def _check_objects(objects: list[ShaFile], names: list[bytes]) -> None:
    """git's own checks of every new object and name (what ``git fsck`` would say), before any is stored."""
    try:
        for item in objects:
            item.check()
        for name in names:
            if not (validate_path_element_ntfs(name) and validate_path_element_hfs(name)):
                raise ObjectFormatException(f"invalid name {name!r}")
    except ObjectFormatException as exc:
        raise PermanentError(f"SAN Desktop refused to write a commit git would call damaged ({exc}).") from exc


def _checked_out(repo: Repo) -> dict[bytes, str]:
    """Each branch checked out in a work tree of the repository, with that work tree's folder."""
    common = Path(repo.commondir())
    heads: list[tuple[Path, str]] = []
    if not ConfigFile.from_path(str(common / "config")).get_boolean((b"core",), b"bare", False):
        heads.append((common / "HEAD", str(common.parent if common.name == ".git" else common)))
    worktrees = common / "worktrees"
    if worktrees.is_dir():
        for entry in sorted(worktrees.iterdir()):
            try:
                gitdir = (entry / "gitdir").read_text(encoding="utf-8").strip()
            except OSError:
                gitdir = str(entry)
            heads.append((entry / "HEAD", str(Path(gitdir).parent)))
    found: dict[bytes, str] = {}
    for head, folder in heads:
        try:
            text = head.read_bytes().strip()
        except OSError:
            continue
        if text.startswith(b"ref: "):
            found.setdefault(text[5:].strip(), folder)
    return found


def _write_error(repository: Path, exc: OSError) -> Exception:
    """A failed write to the user's repository, as a sentence; a full disk waits, the rest is the user's
    to fix (said without the words a full disk is recognised by)."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return StorageFullError(repository, "the TIL was not committed yet")
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno == errno.EROFS:
        return PermanentError(
            f"Cannot commit to {repository}: its file system is mounted without write access{where}. Make it "
            "writable (or choose another repository), then retry the commit."
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return PermanentError(
            f"Cannot commit to {repository}: permission denied{where}. Make the repository writable for you, "
            "then retry the commit."
        )
    return PermanentError(f"Cannot commit to {repository}: {exc.strerror or exc}{where}.")


def _as(kind: type[T], item: ShaFile) -> T:
    if not isinstance(item, kind):
        raise PermanentError(f"The repository holds a {item.type_name.decode()} where a {kind.__name__} belongs.")
    return item


def _ref(repo: Repo, name: Ref) -> ObjectID | None:
    try:
        return repo.refs[name]
    except KeyError:
        return None


def _config(config: object, key: bytes) -> str:
    try:
        value = config.get((b"user",), key)  # type: ignore[attr-defined]
    except KeyError:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value or "")
