"""Committing one file to a branch of a local git repository with dulwich (no git binary needed).

Only the TIL file goes into the commit, built from the branch's own tree: the working tree and the index
are never read or written, so the user's modified, staged and untracked files stay exactly as they were.
A branch that is checked out is refused (committing to it without touching the index would leave the
checkout behind its branch). A retry finds its content already at the path and commits nothing twice.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.refs import HEADREF, Ref
from dulwich.repo import Repo

from san_desktop.core.errors import PermanentError, TransientError

FILE_MODE = 0o100644
TREE_MODE = 0o040000


def _tree_with(repo: Repo, tree_id: ObjectID | None, parts: list[bytes], blob_id: ObjectID) -> ObjectID:
    tree = repo[tree_id] if tree_id else Tree()
    assert isinstance(tree, Tree)
    name = parts[0]
    if len(parts) == 1:
        tree.add(name, FILE_MODE, blob_id)
    else:
        existing = tree[name][1] if name in tree else None
        tree.add(name, TREE_MODE, _tree_with(repo, existing, parts[1:], blob_id))
    repo.object_store.add_object(tree)
    return tree.id


def _blob_at(repo: Repo, tree_id: ObjectID, parts: list[bytes]) -> ObjectID | None:
    tree = repo[tree_id]
    for index, name in enumerate(parts):
        if not isinstance(tree, Tree) or name not in tree:
            return None
        _mode, sha = tree[name]
        if index == len(parts) - 1:
            return sha
        tree = repo[sha]
    return None


def commit_file(
    repository: Path,
    branch: str,
    path: str,
    content: bytes,
    message: str,
    author_name: str = "",
    author_email: str = "",
) -> str:
    """Commit ``content`` at ``path`` on ``branch`` (made from HEAD if it does not exist yet); returns
    the commit id. Raises ``PermanentError`` with what to do when it cannot."""
    try:
        repo = Repo(str(repository))
    except NotGitRepository as exc:
        raise PermanentError(f"{repository} is not a git repository (set github.local_repository)") from exc
    with repo:
        ref = Ref(b"refs/heads/" + branch.encode("utf-8"))
        head = repo.refs.get_symrefs().get(HEADREF)
        if head == ref and not repo.bare:
            raise PermanentError(
                f"The branch {branch} is checked out in {repository}: SAN Desktop commits only to a branch that "
                "is not checked out, so your index and files stay exactly as they are. Set github.local_branch "
                "to another branch (it is created from your HEAD) and merge it when you like."
            )
        parent = _ref(repo, ref)
        base = parent or _ref(repo, HEADREF)
        parts = [part.encode("utf-8") for part in path.strip("/").split("/")]
        blob = Blob.from_string(content)
        base_tree = repo[base].tree if base else None  # type: ignore[attr-defined]
        if parent is not None and base_tree is not None and _blob_at(repo, base_tree, parts) == blob.id:
            return parent.decode("ascii")  # already there (a retry after a crash): no second commit
        repo.object_store.add_object(blob)
        commit = Commit()
        commit.tree = _tree_with(repo, base_tree, parts, blob.id)
        commit.parents = [base] if base else []
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
        repo.object_store.add_object(commit)
        if not repo.refs.set_if_equals(ref, parent, commit.id):
            raise TransientError(f"The branch {branch} moved while SAN Desktop committed; it tries again")
        return commit.id.decode("ascii")


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
