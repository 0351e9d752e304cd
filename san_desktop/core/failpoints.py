"""Fail points for crash tests (after FoundationDB's and TiKV's): a named place in the code where a test
can make the process stop and wait to be killed. Off unless ``SAN_FAILPOINTS`` names the point, so
the app never pauses by itself; a test sets it for a child process and kills that process when the
marker file appears in ``SAN_FAILPOINT_DIR``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

ENV_POINTS = "SAN_FAILPOINTS"
ENV_DIR = "SAN_FAILPOINT_DIR"


def pause_here(name: str) -> None:
    """If ``name`` is armed: say so (a marker file) and wait, forever, to be killed."""
    armed = os.environ.get(ENV_POINTS, "")
    if not armed or name not in armed.split(","):
        return
    folder = Path(os.environ.get(ENV_DIR, "."))
    (folder / f"{name}.reached").write_text(str(os.getpid()), encoding="utf-8")
    threading.Event().wait()
