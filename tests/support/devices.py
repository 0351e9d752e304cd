"""Device nodes for tests of what refuses them: one of the test's own where it may make one (as root), so that a
regression that writes over a device writes over the test's copy, never the machine's ``/dev/null``; elsewhere
the machine's own, which a user who is not root cannot replace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

_NUMBERS = {"null": (1, 3), "zero": (1, 5), "full": (1, 7)}


def device_node(path: Path, kind: str) -> Path:
    """A character device at ``path`` that behaves as Linux's ``/dev/<kind>`` (``null``, ``zero`` or ``full``);
    ``/dev/<kind>`` itself where this process may not make one."""
    if os.geteuid() != 0:
        return Path("/dev") / kind
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(*_NUMBERS[kind]))
    return path
