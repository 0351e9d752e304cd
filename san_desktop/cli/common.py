"""Helpers shared by the ``san`` subcommands."""

from __future__ import annotations

import argparse
import io
import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from san_desktop.core.text import format_size, terminal_safe

if TYPE_CHECKING:
    from san_desktop.app import SanApp

T = TypeVar("T")

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


# --- lists: `--limit N` or `--all`, `--json`, and a word about what was left out ----------------------

MAX_ROWS = 100_000  # the largest --limit


def add_list_options(parser: argparse.ArgumentParser, default: int = 50, *, maximum: int = MAX_ROWS) -> None:
    """``--limit N`` (``default``) or ``--all`` (``args.limit`` is then None), and ``--json`` (the rows as a JSON
    list): how a list command shows its rows (``print_rows``)."""
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument(
        "--limit", type=count(maximum), default=default, metavar="N", help=f"the first N rows (default {default})"
    )
    # (a default of its own: argparse tells `--all` apart from an unset --limit only by a value that differs)
    amount.add_argument(
        "--all", dest="limit", action="store_const", const=None, default=argparse.SUPPRESS, help="every row"
    )
    parser.add_argument("--json", action="store_true", help="the rows as a JSON list (what is left out: on stderr)")


def rows_wanted(args: argparse.Namespace) -> int | None:
    """How many rows to ask the service for: one more than ``--limit`` (which says whether there are more), or
    None for ``--all``."""
    limit: int | None = args.limit
    return None if limit is None else limit + 1


def print_rows(
    rows: Sequence[T],
    args: argparse.Namespace,
    *,
    headers: Sequence[str],
    cells: Callable[[T], Sequence[str]],
    empty: str,
    noun: str,
    plural: str | None = None,
    total: int | None = None,
    more: bool | None = None,
    unknown_more: str | None = None,
    as_json: Callable[[T], Any] | None = None,
    heading: str | None = None,
) -> None:
    """A list command's rows: a table (``heading`` above it; ``empty`` when there are none), or with ``--json`` a
    JSON list of them (each ``as_json``, the row itself by default); then, on stderr, what ``--limit`` left out.

    ``rows`` is what the service gave for ``rows_wanted(args)``: those past ``--limit`` are not shown, and say
    that there are more. ``total`` (when a count is cheap) says how many in all; without it the line says only
    that there are more (``unknown_more``, "More <plural>" by default). A caller that cut the rows itself passes
    ``more`` (whether it left any out), and they are shown as they are."""
    plural = plural or f"{noun}s"
    if more is None:
        shown = rows if args.limit is None else rows[: args.limit]
        more = len(rows) > len(shown)
    else:
        shown = rows
    if args.json:
        print_json([as_json(row) if as_json is not None else row for row in shown])
    elif not shown:
        print(empty)
    else:
        if heading is not None:
            print(heading)
        print_table(headers, [cells(row) for row in shown])
    if total is not None:
        say_left_out(len(shown), total, noun, plural)
    elif more:
        say_more(f"{unknown_more or f'More {plural}'} than these {len(shown):,}")


def say_left_out(shown: int, total: int, noun: str, plural: str | None = None) -> None:
    """After a list cut at its ``--limit``: how many of the ``total`` ``noun`` (singular; ``plural``, "<noun>s" by
    default) it left out and how to see them, on stderr (standard output stays the list)."""
    if total > shown:
        left = total - shown
        say_more(f"{left:,} more {noun if left == 1 else plural or f'{noun}s'} not shown")


def say_more(what: str) -> None:
    """``what`` was left out of a list (``--limit``), and how to see it, on stderr."""
    print(f"{what}: add `--limit N` to see N, or `--all`.", file=sys.stderr)


# --- progress on stderr ---------------------------------------------------------------------------------------


class Stream(Protocol):
    """Where ``Progress`` writes: stderr as ``san`` wraps it (``TerminalSafeStream``), or a test's."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class Progress:
    """How far a long command has come, on stderr (``stream``): on a terminal one line rewritten in place
    (a carriage return, then cleared to its end), at most ``TERMINAL_UPDATES`` times a second; elsewhere (a pipe, a log)
    plain lines, one when ``LOG_SECONDS`` have passed or the work has moved on a ``LOG_STEPS``th of the whole
    since the last; nothing at all when ``quiet`` (``--json``). The first and the last update are always shown.

    Called as ``progress(done, total)`` (what ``transfer``'s progress callbacks take), or ``progress.say(text)``
    for a step without numbers; ``close()`` (or leaving a ``with`` block) ends the terminal's line."""

    TERMINAL_UPDATES = 5
    LOG_SECONDS = 5.0
    LOG_STEPS = 10  # a line each tenth of the way

    def __init__(
        self,
        label: str,
        *,
        quiet: bool = False,
        sizes: bool = False,
        stream: Stream | None = None,
        clock: Callable[[], float] = time.monotonic,
        width: int | None = None,
    ) -> None:
        """``label`` starts each line ("Importing"); ``sizes``: the numbers are bytes (``1.5 MB of 40.0 MB``)."""
        self.label, self.quiet, self.sizes = label, quiet, sizes
        self._stream: Stream = stream if stream is not None else sys.stderr
        # (sys.stderr is None in a start without a console)
        self.terminal = not quiet and self._stream is not None and self._stream.isatty()
        self._clock = clock
        self._width = width
        self._last_time: float | None = None  # when a line was last written
        self._last_step = 0  # the LOG_STEPS-th of the way the last plain line was at
        self._pending: str | None = None  # on a terminal: the newest text, not yet shown (throttled)
        self._open = False  # on a terminal: a line is up, without its newline

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __call__(self, done: int, total: int) -> None:
        if total > 0:
            shown = self._number(done), self._number(total), min(done, total) / total
            text = f"{self.label} {shown[0]} of {shown[1]} ({shown[2]:.0%})"
        else:
            text = f"{self.label} {self._number(done)}"
        finished = total > 0 and done >= total
        self._update(text, step=done * self.LOG_STEPS // total if total > 0 else None, final=finished)

    def say(self, text: str) -> None:
        """A step described in words ("cards: 1,200 row(s)"), throttled as the numbers are."""
        self._update(f"{self.label}: {text}", step=None, final=False)

    def close(self) -> None:
        """Shows the newest update if it was held back, and ends the terminal's line."""
        if self.terminal and self._pending is not None:
            self._draw(self._pending)
        if self._open:
            self._write_exact("\n")
            self._open = False

    def _number(self, value: int) -> str:
        return format_size(value) if self.sizes else f"{value:,}"

    def _update(self, text: str, *, step: int | None, final: bool) -> None:
        if self.quiet or self._stream is None:
            return
        now = self._clock()
        first = self._last_time is None
        since = now - self._last_time if self._last_time is not None else 0.0
        if self.terminal:
            self._pending = text
            if first or final or since >= 1 / self.TERMINAL_UPDATES:
                self._draw(text)
                self._last_time = now
            return
        moved = step is not None and step > self._last_step
        if first or final or moved or since >= self.LOG_SECONDS:
            self._stream.write(text + "\n")
            self._stream.flush()
            self._last_time = now
            if step is not None:
                self._last_step = step

    def _draw(self, text: str) -> None:
        width = self._width or shutil.get_terminal_size().columns
        if len(text) >= width:  # a line that wraps cannot be rewritten with \r
            text = text[: max(1, width - 2)] + "…"
        self._write_exact("\r")
        self._stream.write(text)
        self._write_exact("\x1b[K")  # clear what a longer line left
        self._stream.flush()
        self._pending = None
        self._open = True

    def _write_exact(self, control: str) -> None:
        """A control sequence, past ``TerminalSafeStream`` (which makes user text inert and would drop it)."""
        getattr(self._stream, "exact", self._stream).write(control)
