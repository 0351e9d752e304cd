"""Where SAN Desktop keeps its data: the platform's user data directory unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from san_desktop import APP_ID
from san_desktop.core.errors import DataDirectoryError

DATA_DIR_ENV = "SAN_DATA_DIR"
DATABASE_FILE = "san.db"
LOCK_FILE = "san.lock"
LOG_DIR = "logs"


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--data-dir`` wins over ``SAN_DATA_DIR``, which wins over the platform default."""
    if explicit:
        chosen = Path(explicit)
    elif os.environ.get(DATA_DIR_ENV):
        chosen = Path(os.environ[DATA_DIR_ENV])
    else:
        chosen = Path(platformdirs.user_data_dir(APP_ID, appauthor=False))
    return chosen.expanduser().resolve()


def ensure_data_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
        (path / LOG_DIR).mkdir(exist_ok=True)
    except OSError as exc:
        raise DataDirectoryError(
            f"Cannot create the data directory {path}: {exc.strerror or exc}. "
            "Choose another one with --data-dir or SAN_DATA_DIR."
        ) from exc
    if not os.access(path, os.W_OK):
        raise DataDirectoryError(
            f"The data directory {path} is not writable. "
            "Fix its permissions or choose another one with --data-dir or SAN_DATA_DIR."
        )
    return path


def database_path(data_dir: Path) -> Path:
    return data_dir / DATABASE_FILE
