"""Where SAN Desktop keeps its data: the platform's user data directory unless told otherwise."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import platformdirs

from san_desktop import APP_ID
from san_desktop.core.errors import DataDirectoryError

DATA_DIR_ENV = "SAN_DATA_DIR"
DATABASE_FILE = "san.db"
LOCK_FILE = "san.lock"
LOG_DIR = "logs"
MACHINE_ID_FILE = "machine-id"


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


def machine_id(data_dir: Path) -> str:
    """This data folder's id, made once: the machine in a library that several machines share (``app_sessions``
    names it, so that a restart ends only its own machine's earlier sessions)."""
    path = data_dir / MACHINE_ID_FILE
    try:
        found = path.read_text(encoding="ascii").strip()
    except (FileNotFoundError, UnicodeDecodeError):
        found = ""
    if len(found) == 36:
        return found
    made = str(uuid.uuid4())
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(made + "\n", encoding="ascii")
    os.replace(temporary, path)
    return made
