"""Reading a thread's CPU priority, to check what ``core.thread_priority`` did."""

from __future__ import annotations

import os
import sys
import threading

import pytest

# Linux keeps a nice value per thread and lets a test read it; Windows and macOS set a thread's priority
# through their own thread APIs, which give no value to compare here (that code is untried on this CI).
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a thread's own nice value can be read on Linux only"
)


def thread_nice() -> int:
    """The calling thread's nice value (Linux)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
