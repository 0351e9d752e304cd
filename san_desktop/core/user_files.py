"""Files the person owns, where SAN Desktop writes or reads them outside its own data folder (an export, an
import, a TIL written to a file): the one place for the rules of an edge (DESIGN 12).

- A file is written whole or not at all: into a temporary file beside it, then linked to its name (a new
  file: the link fails if something took the name meanwhile, so nothing is ever replaced by accident) or
  renamed over the old one when the caller was told to replace it (``overwrite``), only once it is whole.
- What is not a regular file is never written to nor replaced, whatever the caller was told: a link (its
  target would be replaced), a folder, a device (``/dev/full``), a pipe or a socket.
- Inside a folder (an export's, an import's) every part of every path is looked at with ``lstat``: a link or
  anything but a folder on the way is refused, and a link at the end is never followed (not read, written
  through or removed), so nothing outside the folder is touched through a link someone put there. The folder
  itself is the one the person named (reached through links if they named it so); what is below it is
  checked.

Checks and the operation are separate system calls, so a process racing the export could still swap a part
between them; what this stops is a link left in place (in a vault, a synced folder, a download)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from san_desktop.core.errors import SanError

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # (not on Windows: there the lstat before the open is the check)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a pipe with no writer must not hang the open
O_BINARY = getattr(os, "O_BINARY", 0)
TEMPORARY_PREFIX = ".san-"  # a temporary file's name: hidden, and recognisable as SAN Desktop's
TEMPORARY_SUFFIX = ".partial"
# the file system cannot make a second name for a file: the new file is renamed instead (after a last look)
_NO_HARD_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP}


class TargetExistsError(SanError):
    """The file to write is there already, and nobody said to replace it: nothing was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} already exists: nothing was written. Choose another name, or replace it (--overwrite)."
        )
        self.path = path


class LinkInPathError(SanError):
    """A part of a path inside a folder SAN Desktop reads or writes is a link (or not a folder)."""

    def __init__(self, path: Path, what: str, root: Path) -> None:
        super().__init__(
            f"{path} is {what}: SAN Desktop does not follow links out of {root} nor write through them; "
            "nothing was changed. Remove it, or choose another folder."
        )
        self.path = path


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is, in words: "a folder", "a link", "a pipe (FIFO)"…"""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _link_named(path: Path) -> str:
    """ "a link (to X)"."""
    try:
        return f"a link (to {os.readlink(path)})"
    except OSError:
        return "a link"


def _lstat(path: Path) -> os.stat_result | None:
    """``path``'s own status (a link is not followed), None when there is nothing; else a sentence."""
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise SanError(f"Cannot write {path}: {exc.strerror or exc}.") from exc


def _kind_refused(path: Path, found: os.stat_result | None, example: str) -> None:
    """The refusal of a link, a folder, a device, a pipe or a socket at ``path`` (never written to)."""
    if found is None or stat.S_ISREG(found.st_mode):
        return
    if stat.S_ISLNK(found.st_mode):
        raise SanError(
            f"{path} is {_link_named(path)}: SAN Desktop does not write through links, so its target is not "
            "replaced. Give the path of a file itself, or a new name."
        )
    if stat.S_ISDIR(found.st_mode):
        raise SanError(f"{path} is a folder: give a file name, e.g. {path / example}.")
    raise SanError(f"{path} is {kind_of(found.st_mode)}, not a regular file: nothing was written. Give a file name.")


def check_target(path: Path, *, suffix: str, why: str, example: str, overwrite: bool = False) -> bool:
    """Refuse, before any work, a file an export may not write: a link, a folder, a device, a pipe or a
    socket (even with ``overwrite``), a name without ``suffix`` (``why`` says what needs it), a missing
    folder, and an existing file unless ``overwrite`` (``TargetExistsError``). ``example`` is a file name to
    suggest inside a folder given instead of a file. Returns whether a file is there (to be replaced)."""
    found = _lstat(path)
    _kind_refused(path, found, example)
    if path.suffix.lower() != suffix:
        raise SanError(f"{path} does not end in {suffix}: {why} (e.g. {path.stem or 'san'}{suffix}).")
    if not path.parent.is_dir():  # (the folder may be reached through a link the person chose: followed)
        raise SanError(f"Cannot write {path}: there is no folder {path.parent} (create it, or choose another).")
    if found is not None and not overwrite:
        raise TargetExistsError(path)
    return found is not None


def _temporary_beside(path: Path, mode: int) -> Path:
    """A new empty file in ``path``'s folder, made with ``mode`` (less the umask, as any new file)."""
    for _attempt in range(100):
        candidate = path.parent / f"{TEMPORARY_PREFIX}{secrets.token_hex(8)}{TEMPORARY_SUFFIX}"
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY, mode)
        except FileExistsError:
            continue
        os.close(fd)
        return candidate
    raise FileExistsError(errno.EEXIST, "No free name for a temporary file", str(path.parent))


def _place(temporary: Path, path: Path, *, overwrite: bool) -> None:
    """Give the finished ``temporary`` its name ``path``."""
    if overwrite:
        old = _lstat(path)
        _kind_refused(path, old, "")  # again: it may have changed while it was written
        if old is not None:  # the file keeps the permissions it had, as an editor saving it would
            with contextlib.suppress(OSError):
                os.chmod(temporary, stat.S_IMODE(old.st_mode))
        os.replace(temporary, path)  # (never follows a link at ``path``: it would replace the link itself)
        return
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise TargetExistsError(path) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if os.path.lexists(path):
            raise TargetExistsError(path) from None
        os.rename(temporary, path)
    else:
        temporary.unlink()


@contextmanager
def new_file(path: Path, *, overwrite: bool = False, private: bool = False) -> Iterator[Path]:
    """A temporary file beside ``path`` for the block to write (a name only: the block opens it), given
    ``path``'s name only when the block succeeds: a failed or cancelled write leaves no partial file and
    the old file as it was. Without ``overwrite`` a file that appeared meanwhile is kept
    (``TargetExistsError``); with it, only a regular file is replaced (its permissions kept). A new file
    gets the permissions any program's new file gets, or with ``private`` only the owner's."""
    temporary = _temporary_beside(path, 0o600 if private else 0o666)
    try:
        yield temporary
        _place(temporary, path, overwrite=overwrite)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def write_file(path: Path, write: Callable[[Path], object], *, overwrite: bool = False, private: bool = False) -> None:
    """``write`` a temporary file beside ``path``, then give it that name (see ``new_file``)."""
    with new_file(path, overwrite=overwrite, private=private) as temporary:
        write(temporary)


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (no link followed), at most ``limit`` of them (more
    is an ``OSError`` EFBIG); None for a link, a pipe, a device or anything else that is no regular file.
    Looked at before it is opened (opening a device may do something), and opened without blocking and
    without following a link, should it have changed since."""
    found = path.lstat()
    if not stat.S_ISREG(found.st_mode):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_BINARY)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EMLINK):  # a link; a socket; (a link, on BSDs)
            return None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


class Confined:
    """A folder the person named, and the paths below it (relative, POSIX: ``Cards/x.md``), each part checked
    before anything is read, written or removed there: every part but the last must be a folder, not a link
    (``LinkInPathError`` says which is not); what the last part is, each operation looks at itself (a link
    there is never followed: not read, not written through, not removed)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, relative: str) -> Path:
        """The path of ``relative``, every folder on the way checked."""
        parts = [part for part in relative.split("/") if part not in ("", ".")]
        if any(part == ".." or "\\" in part for part in parts):
            raise LinkInPathError(self.root / relative, "outside the folder", self.root)
        current = self.root
        for part in parts[:-1]:
            current = current / part
            found = _lstat(current)
            if found is None:
                break  # the rest does not exist yet: nothing to follow
            if stat.S_ISLNK(found.st_mode):
                raise LinkInPathError(current, _link_named(current), self.root)
            if not stat.S_ISDIR(found.st_mode):
                raise LinkInPathError(current, f"{kind_of(found.st_mode)}, not a folder", self.root)
        return self.root.joinpath(*parts)

    def status(self, relative: str) -> os.stat_result | None:
        """``relative``'s own status (a link there is not followed), None when it is not there."""
        return _lstat(self.path(relative))

    def folder(self, relative: str) -> Path | None:
        """The folder ``relative``, None when it is missing; a link, a file or anything else there is refused."""
        path = self.path(relative)
        found = _lstat(path)
        if found is None or stat.S_ISDIR(found.st_mode):
            return None if found is None else path
        what = _link_named(path) if stat.S_ISLNK(found.st_mode) else f"{kind_of(found.st_mode)}, not a folder"
        raise LinkInPathError(path, what, self.root)

    def make_folder(self, relative: str) -> Path:
        """``relative`` as a folder, made (with the folders above it) when missing; a link or a file on the
        way or there is refused."""
        current = ""
        for part in (part for part in relative.split("/") if part):
            current = f"{current}/{part}" if current else part
            if self.folder(current) is None:
                with contextlib.suppress(FileExistsError):  # (made meanwhile: looked at again below)
                    self.path(current).mkdir()
        made = self.folder(relative)
        if made is None:  # removed as soon as it was made
            raise FileNotFoundError(errno.ENOENT, "No such folder", str(self.path(relative)))
        return made

    def names(self, relative: str) -> list[str]:
        """The names in the folder ``relative`` (none when it is missing)."""
        path = self.folder(relative)
        return [] if path is None else os.listdir(path)

    def read(self, relative: str, limit: int) -> bytes | None:
        """The bytes of the regular file ``relative``; None when it is missing or no regular file."""
        try:
            return read_regular(self.path(relative), limit)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def write(self, relative: str, data: bytes, *, overwrite: bool) -> None:
        """``data`` as the file ``relative``, whole or not at all (``new_file``): a new file, or with
        ``overwrite`` a regular file replaced; its folders checked."""
        path = self.path(relative)
        write_file(path, lambda temporary: temporary.write_bytes(data), overwrite=overwrite)

    def remove(self, relative: str) -> bool:
        """Remove the regular file ``relative`` (a link, folder or anything else there stays); whether it did."""
        found = self.status(relative)
        if found is None or not stat.S_ISREG(found.st_mode):
            return False
        self.path(relative).unlink(missing_ok=True)
        return True
