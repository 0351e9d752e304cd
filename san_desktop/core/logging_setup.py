"""Logging to a rotating file in the data directory and to stderr, with secrets redacted.

Every handler installed here carries ``RedactingFilter``: whatever a module logs (an exception that
echoes an API key, an HTTP library's request line with credentials in the URL), no secret reaches the
log file or the terminal.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

from san_desktop.core.paths import LOG_DIR
from san_desktop.core.redact import redact

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"
_HANDLER_TAG = "_san_handler"


class RedactingFilter(logging.Filter):
    """Formats a record's message and traceback once, redacted, before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_san_redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what can be kept
            message = f"{record.msg!r} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        record._san_redacted = True
        return True


class _QuietFileHandler(logging.handlers.RotatingFileHandler):
    """A log file that cannot be written (disk full, read-only) costs one line on stderr, not a
    traceback per record."""

    _reported = False

    def handleError(self, record: logging.LogRecord) -> None:
        if not _QuietFileHandler._reported:
            _QuietFileHandler._reported = True
            error = sys.exc_info()[1]
            print(f"san: cannot write the log file {self.baseFilename}: {error}", file=sys.stderr)


def setup_logging(
    data_dir: Path, *, level: int = logging.INFO, stderr: bool = True, stderr_level: int = logging.WARNING
) -> Path:
    """Install SAN's handlers on the root logger (idempotent: earlier SAN handlers are replaced). The file
    takes ``level`` and up; the terminal only ``stderr_level`` and up (warnings and errors, unless asked
    for more: `san jobs run --verbose`), so a command's own output is not buried in log lines."""
    teardown_logging()
    root = logging.getLogger()
    log_file = data_dir / LOG_DIR / "san.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    file_handler = _QuietFileHandler(log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8", delay=True)
    handlers: list[logging.Handler] = [file_handler]
    if stderr:
        terminal = logging.StreamHandler(sys.stderr)
        terminal.setLevel(stderr_level)
        handlers.append(terminal)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler.addFilter(RedactingFilter())
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


def exit_at_once(code: int) -> None:
    """End the process now, with what the log and the standard streams hold written out first: for a thread that
    cannot be stopped (a call that does not return), which would otherwise keep the process alive (Qt's thread
    pools wait for their threads when they are destroyed; Python waits for non-daemon threads)."""
    for handler in logging.getLogger().handlers:
        handler.flush()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    os._exit(code)
