"""Fail points for crash tests (after FoundationDB's and TiKV's): a named place in the code where a test
can make the process stop and wait to be killed. Off unless ``SAN_FAILPOINTS`` names the point, so
the app never pauses by itself; a test sets it for a child process and kills that process when the
marker file appears in ``SAN_FAILPOINT_DIR``. ``name@N`` stops there the Nth time it is reached (and every
later time), for a kill halfway through many jobs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

ENV_POINTS = "SAN_FAILPOINTS"
ENV_DIR = "SAN_FAILPOINT_DIR"


_reached: dict[str, int] = {}
_reached_lock = threading.Lock()


def pause_here(name: str) -> None:
    """If ``name`` is armed: say so (a marker file) and wait, forever, to be killed."""
    armed = os.environ.get(ENV_POINTS, "")
    if not armed:
        return
    for point in armed.split(","):
        point_name, _, times = point.partition("@")
        if point_name != name:
            continue
        if times:
            with _reached_lock:
                _reached[name] = _reached.get(name, 0) + 1
                if _reached[name] < int(times):
                    return
        folder = Path(os.environ.get(ENV_DIR, "."))
        (folder / f"{name}.reached").write_text(str(os.getpid()), encoding="utf-8")
        threading.Event().wait()
