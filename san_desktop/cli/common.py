"""Helpers shared by the ``san`` subcommands."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

from san_desktop.core.logging_setup import setup_logging
from san_desktop.core.paths import database_path, ensure_data_dir, resolve_data_dir
from san_desktop.db.database import Database, open_database


def open_cli_database(data_dir_arg: str | None) -> Database:
    """The database of the data directory, migrated if needed; no instance lock (a running app may
    share it: SQLite's WAL lets both work)."""
    directory = ensure_data_dir(resolve_data_dir(data_dir_arg))
    setup_logging(directory, stderr=False)
    return open_database(database_path(directory))


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {key: _plain(item) for key, item in asdict(value).items()}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def print_json(data: Any) -> None:
    json.dump(_plain(data), sys.stdout, ensure_ascii=False, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]
    print("  ".join(header.ljust(width) for header, width in zip(headers, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def short_time(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value else "-"
