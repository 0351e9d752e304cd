"""Helpers shared by the ``san`` subcommands."""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from san_desktop.core.text import terminal_safe

if TYPE_CHECKING:
    from san_desktop.app import SanApp


# The commands that only read the library, as (command, action): they open it as it is, so that they write
# nothing of it (no schema made in an empty server database, none upgraded, no shared settings seeded). `san
# import --list` too (``only_reads``).
READING_COMMANDS = frozenset(
    {
        ("scrap", "list"),
        ("cards", "list"),
        ("cards", "show"),
        ("cards", "similar"),
        ("search", None),
        ("jobs", "list"),
        ("jobs", "show"),
        ("jobs", "failures"),
        ("til", "list"),
        ("til", "show"),
        ("til", "commits"),
        ("quiz", "due"),
        ("stars", "recommend"),
        ("config", "show"),
        ("trash", "list"),
    }
)


def only_reads(args: argparse.Namespace) -> bool:
    """Whether the command ``args`` names only reads the library (``READING_COMMANDS``, or any ``--dry-run``)."""
    if getattr(args, "dry_run", False):
        return True
    command = getattr(args, "command", None)
    if command == "import":
        return bool(getattr(args, "list", False))
    return (command, getattr(args, f"{command}_command", None)) in READING_COMMANDS


@contextmanager
def open_library(
    args: argparse.Namespace,
    *,
    kind: str = "cli",
    lock: bool = False,
    log_to_stderr: bool = False,
    verbose: bool = False,
) -> Iterator[SanApp]:
    """The data directory's facade, closed afterwards; without ``lock``, beside a running app if there is one (no
    instance lock, no app session). ``app.open_app``, but opened as the window opens it: SQLite checks the
    database's integrity on a thread (reading every page, without the GIL) while the facade's modules are
    imported, and ``start_backend`` waits for its verdict before anything writes. A command that only reads
    (``only_reads``) opens the library as it is and writes nothing of it."""
    from san_desktop.db.backends.sqlite.integrity import start_integrity_check

    integrity = start_integrity_check(args.data_dir)

    from san_desktop.app import open_app

    with open_app(
        args.data_dir,
        kind=kind,
        lock=lock,
        log_to_stderr=log_to_stderr,
        verbose=verbose,
        integrity=integrity,
        reading=not lock and only_reads(args),
    ) as app:
        yield app


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
    """JSON exactly as stored (control characters come out escaped), past the terminal filter."""
    out = getattr(sys.stdout, "exact", sys.stdout)
    json.dump(_plain(data), out, ensure_ascii=False, indent=2, sort_keys=True)
    out.write("\n")
    out.flush()


class TerminalSafeStream(io.TextIOBase):
    """Wraps stdout or stderr for the duration of a command: user text (a scrap with ``ESC ]0;…`` or an
    OSC 52 clipboard write, bidi overrides, lone surrogates) is printed inert. ``exact`` is the
    wrapped stream, for output that must stay byte-exact (JSON)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.exact = stream

    def write(self, text: str) -> int:
        self.exact.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self.exact.flush()

    def isatty(self) -> bool:
        return self.exact.isatty()

    def fileno(self) -> int:
        return self.exact.fileno()


# --- argument types that refuse what would break later (NaN, infinities, huge numbers) ---------


def count(maximum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {value!r}") from None
        if not 1 <= number <= maximum:
            raise argparse.ArgumentTypeError(f"must be between 1 and {maximum}, not {value}")
        return number

    return parse


def seconds(maximum: float) -> Callable[[str], float]:
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of seconds, not {value!r}") from None
        if not math.isfinite(number) or not 0 < number <= maximum:
            raise argparse.ArgumentTypeError(f"must be more than 0 and at most {maximum:g} seconds, not {value}")
        return number

    return parse


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]
    print("  ".join(header.ljust(width) for header, width in zip(headers, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def short_time(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def add_amount(parser: argparse.ArgumentParser, maximum: int, default: int = 50) -> None:
    """``--limit N`` (``default``) or ``--all`` (``args.limit`` is then None): how many rows a list shows."""
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--limit", type=count(maximum), default=default, metavar="N", help=f"the first N ({default})")
    amount.add_argument("--all", dest="limit", action="store_const", const=None, help="all of them")


def say_left_out(shown: int, total: int, noun: str) -> None:
    """After a list cut at its ``--limit``: how many of the ``total`` ``noun`` (singular) it left out and how to
    see them, on stderr (standard output stays the list)."""
    if total > shown:
        left = total - shown
        say_more(f"{left:,} more {noun}{'' if left == 1 else 's'} not shown")


def say_more(what: str) -> None:
    """``what`` was left out of a list (``--limit``), and how to see it, on stderr."""
    print(f"{what}: add `--limit N` to see N, or `--all`.", file=sys.stderr)
