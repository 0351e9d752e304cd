"""Background threads yield the CPU to the window: a job worker or a capture from the browser runs at a lower
priority than the GUI thread, so that on a machine with few cores the window gets the CPU first when it has
something to paint (``make bench``: the endpoint's burst and the card making after it). It is the lowest
priority, as desktop indexers use: while other programs keep every core busy, cards wait for them; with a
core free they are made at full speed.

On Linux a thread's nice value is its own (``setpriority`` on its thread id). Raising it needs no privilege
and cannot be undone without one, which suits threads that only ever run background work (a pool's
threads). Windows has thread priorities and macOS quality-of-service classes for the same (not tried on
those systems here: a failure is only logged)."""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

BACKGROUND_NICE = 19  # the lowest: CFS then gives the window (nice 0) about 68 times its share of a busy core
_WINDOWS_BELOW_NORMAL = -1  # THREAD_PRIORITY_BELOW_NORMAL
_MACOS_QOS_UTILITY = 0x11  # QOS_CLASS_UTILITY: "long-running tasks the user is not waiting on"

_this_thread = threading.local()  # .lowered: whether this thread asked already (a thread id may be reused)


def lower_current_thread() -> bool:
    """Lower the calling thread's CPU priority (once per thread); whether it is lower now."""
    if getattr(_this_thread, "lowered", None) is not None:
        return bool(_this_thread.lowered)
    _this_thread.lowered = False
    ident = threading.get_native_id()
    try:
        if sys.platform.startswith("linux"):
            if os.getpriority(os.PRIO_PROCESS, ident) < BACKGROUND_NICE:
                os.setpriority(os.PRIO_PROCESS, ident, BACKGROUND_NICE)
        elif sys.platform == "win32":
            kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined,unused-ignore]
            if not kernel32.SetThreadPriority(kernel32.GetCurrentThread(), _WINDOWS_BELOW_NORMAL):
                raise OSError("SetThreadPriority failed")
        elif sys.platform == "darwin":
            system = ctypes.CDLL(None)  # libSystem, loaded in every process
            if system.pthread_set_qos_class_self_np(_MACOS_QOS_UTILITY, 0) != 0:
                raise OSError("pthread_set_qos_class_self_np failed")
        else:
            return False
    except (OSError, AttributeError) as exc:  # a sandbox may forbid it: the work runs all the same
        log.debug("Could not lower a background thread's priority: %s", exc)
        return False
    _this_thread.lowered = True
    return True
