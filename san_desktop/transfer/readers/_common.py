"""What every reader shares: cancelling and progress, times made timezone-aware, tags kept once in order, and
the bounded read of a source file."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, time
from pathlib import Path

from san_desktop.core.errors import SanError
from san_desktop.core.inputs import read_file
from san_desktop.core.text import decode_bytes, format_size
from san_desktop.core.urls import is_web_url, normalize_url

# A bookmarks file with icons, or years of highlights, stays well under this; the bound keeps a wrong file
# (a disk image renamed .csv) from being read whole into memory.
SOURCE_MAX_BYTES = 200_000_000
PROGRESS_EVERY = 100

_MONTHS = {
    name: number
    for number, name in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
# "Monday, March 4, 2024 10:11:12 PM" (Kindle), "March 4, 2024 10:11 PM" (Readwise), "Tuesday, February 09,
# 2010, 10:45 PM" (older Kindles), "Monday, 4 March 2024 22:11:12" (Kindles set to British English). Read by
# hand: strptime's %A and %B follow the locale, which Qt sets from the system's.
_TIME = r",?\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?\s*(?P<half>[ap]\.?m\.?)?$"
_ENGLISH_DATES = tuple(
    re.compile(r"^(?:[a-z]+,\s*)?" + date_part + _TIME, re.IGNORECASE)
    for date_part in (
        r"(?P<month>[a-z]+)\s+(?P<day>\d{1,2}),\s*(?P<year>\d{4})",
        r"(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\s+(?P<year>\d{4})",
    )
)


class ImportCancelled(SanError):  # noqa: N818 (named for what happened, as the brief and callers name it)
    """The person cancelled reading the source; nothing was imported."""

    def __init__(self) -> None:
        super().__init__("Import cancelled: nothing was imported.")


class Ticker:
    """Counts entries as a reader reads them: raises ``ImportCancelled`` as soon as ``cancelled()`` is true,
    and reports the count at the start, every ``PROGRESS_EVERY`` entries and at the end."""

    def __init__(self, cancelled: Callable[[], bool], progress: Callable[[int], None] | None) -> None:
        self._cancelled = cancelled
        self._progress = progress
        self.count = 0
        self._report()

    def tick(self) -> None:
        self.count += 1
        if self.count % PROGRESS_EVERY == 0:
            self._report()
        if self._cancelled():
            raise ImportCancelled

    def check(self) -> None:
        """Raise ``ImportCancelled`` if the person cancelled (between entries that are not counted)."""
        if self._cancelled():
            raise ImportCancelled

    def finish(self) -> None:
        if self.count % PROGRESS_EVERY:
            self._report()

    def _report(self) -> None:
        if self._progress is not None:
            self._progress(self.count)
        if self._cancelled():
            raise ImportCancelled


def read_source_text(path: Path) -> str:
    """The text of a single-file source (bookmarks, CSV, clippings), decoded as ``core.text`` decodes files."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SanError(f"Could not read {path}: {exc.strerror or exc}.") from exc
    if size > SOURCE_MAX_BYTES:
        raise SanError(
            f"{path.name} is too large to import ({format_size(size, SOURCE_MAX_BYTES)}, the limit is "
            f"{format_size(SOURCE_MAX_BYTES, size)})."
        )
    return decode_bytes(read_file(path, SOURCE_MAX_BYTES), path.name)


def unique(values: Iterable[str]) -> tuple[str, ...]:
    """Non-empty values, stripped, each once, in their first order."""
    seen: dict[str, None] = {}
    for value in values:
        cleaned = value.strip()
        if cleaned:
            seen.setdefault(cleaned, None)
    return tuple(seen)


def split_tags(text: str, separators: str = r"[,\s]+") -> list[str]:
    """Tags written in one string ("a, b", "#a #b", "a|b"), without their leading '#'."""
    return [part.strip().lstrip("#").strip() for part in re.split(separators, text)]


def aware(moment: datetime | date) -> datetime:
    """A timezone-aware time: a naive one is local time, a date alone is local midnight."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time())
    return moment if moment.tzinfo is not None else moment.astimezone()


def from_epoch(value: str) -> datetime | None:
    """Seconds since 1970 (as bookmarks and Pocket write them); milli- or microseconds are scaled down.
    Anything else, zero included, is no time at all."""
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    while seconds > 1e11:  # a time in milliseconds or microseconds (year 5138 in seconds)
        seconds /= 1000
    if seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def parse_iso(text: str) -> datetime | None:
    """An ISO-8601 date or time (``2024-03-04``, ``2024-03-04 22:11:12+00:00``, ``…T22:11Z``), aware; else None."""
    text = text.strip()
    if not text:
        return None
    try:
        return aware(datetime.fromisoformat(text))
    except ValueError:
        return None


def parse_english_date(text: str) -> datetime | None:
    """A date written out in English with its time, read as local time; anything else is no time."""
    match = next((found for pattern in _ENGLISH_DATES if (found := pattern.match(text.strip()))), None)
    if not match or match["month"].lower() not in _MONTHS:
        return None
    hour = int(match["hour"])
    if match["half"]:
        hour = hour % 12 + (12 if match["half"].lower().startswith("p") else 0)
    try:
        moment = datetime(
            int(match["year"]), _MONTHS[match["month"].lower()], int(match["day"]),
            hour, int(match["minute"]), int(match["second"] or 0),
        )  # fmt: skip
    except ValueError:
        return None
    return aware(moment)


def is_web_address(address: str) -> bool:
    """Whether ``address`` is one http(s) address with a host, as a URL item needs."""
    if not is_web_url(address):
        return False
    try:
        normalize_url(address)
    except ValueError:
        return False
    return True
