"""Logging to a rotating file in the data directory and to stderr."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from san_desktop.core.paths import LOG_DIR

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"
_HANDLER_TAG = "_san_handler"


def setup_logging(data_dir: Path, *, level: int = logging.INFO, stderr: bool = True) -> Path:
    """Install SAN's handlers on the root logger (idempotent: earlier SAN handlers are replaced)."""
    teardown_logging()
    root = logging.getLogger()
    log_file = data_dir / LOG_DIR / "san.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8")
    handlers: list[logging.Handler] = [file_handler]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        setattr(handler, _HANDLER_TAG, True)
        root.addHandler(handler)
    root.setLevel(level)
    return log_file


def teardown_logging() -> None:
    """Remove and close SAN's handlers (tests, and embedding the app in another process)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_TAG, False):
            root.removeHandler(handler)
            handler.close()
