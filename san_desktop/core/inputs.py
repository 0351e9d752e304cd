"""Reading captured input with a bound, whatever the source: every path that turns bytes from outside
into a scrap (files dropped or named on the command line, standard input) reads through here.

- Only regular files are read (a symlink to ``/dev/zero``, a FIFO or a device is refused without
  reading), opened without blocking, so a FIFO with no writer cannot hang the caller.
- The size is checked while reading, never trusted from ``st_size`` (0 for ``/proc`` files), so an
  endless input stops at the limit and memory stays near it.
- Standard input waits at most a timeout for the next bytes, and a closed standard input is explained.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from san_desktop.core.text import RejectedContentError, format_size

CHUNK_BYTES = 64 * 1024
STDIN_IDLE_TIMEOUT_SECONDS = 60.0
# The one limit of a capture is ``capture.max_bytes``: of what is read here (so a UTF-16 file counts its
# two bytes a character), and again of the text it decodes to (``core.text.check_capturable``).
LIMIT_SETTING = "capture.max_bytes"


def too_large(name: str, limit: int, size: int | None = None) -> RejectedContentError:
    measured = f"{format_size(size, limit)}, " if size is not None else ""
    return RejectedContentError(
        f"{name} is too large to scrap: {measured}larger than {format_size(limit, size)} ({LIMIT_SETTING}); "
        "nothing was scrapped."
    )


def _read_limited(read: Callable[[int], bytes], limit: int, name: str) -> bytes:
    """At most ``limit`` + 1 bytes are ever read: one more than allowed says it is too large."""
    data = bytearray()
    while True:
        chunk = read(min(CHUNK_BYTES, limit + 1 - len(data)))
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise too_large(name, limit)


def read_file(path: Path, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; a link at ``path`` is followed
    unless ``follow_links`` is false (then it is refused)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as exc:
        raise RejectedContentError(f"No such file: {path}.") from exc
    except OSError as exc:
        if not follow_links and exc.errno in (errno.ELOOP, errno.EMLINK):  # (EMLINK: a link, on BSDs)
            raise RejectedContentError(f"{path.name} is a link; it was not followed.") from exc
        raise RejectedContentError(f"Could not read {path.name}: {exc.strerror or exc}.") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RejectedContentError(
                f"{path.name} is not a regular file (a device, pipe, socket or folder); nothing was scrapped."
            )
        if info.st_size > limit:
            raise too_large(path.name, limit, info.st_size)
        try:
            return _read_limited(lambda size: os.read(fd, size), limit, path.name)
        except OSError as exc:
            raise RejectedContentError(f"Could not read {path.name}: {exc.strerror or exc}.") from exc
    finally:
        os.close(fd)


def read_stdin(
    limit: int, *, stream: BinaryIO | None = None, idle_timeout: float = STDIN_IDLE_TIMEOUT_SECONDS
) -> bytes:
    """Standard input (or ``stream``) up to end of file, at most ``limit`` bytes, waiting at most
    ``idle_timeout`` seconds for each next piece (POSIX; elsewhere reads block)."""
    if stream is None:
        text_stream = sys.stdin
        stream = getattr(text_stream, "buffer", None) if text_stream is not None else None
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError):
        fd = -1
    if stream is None or fd < 0 or _is_closed(fd):
        raise RejectedContentError(
            "Standard input is closed: pipe the text in (`... | san scrap add -`), or use --text or --file."
        )

    def read(size: int) -> bytes:
        if os.name == "posix":
            ready, _, _ = select.select([fd], [], [], idle_timeout)
            if not ready:
                raise RejectedContentError(
                    f"Nothing arrived on standard input for {idle_timeout:g} s; nothing was scrapped. "
                    "Pipe the text in, or use --text or --file."
                )
        try:
            return os.read(fd, size)
        except OSError as exc:
            raise RejectedContentError(f"Could not read standard input: {exc.strerror or exc}.") from exc

    return _read_limited(read, limit, "Standard input")


def _is_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False
