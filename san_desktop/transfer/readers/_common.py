"""What every reader shares: cancelling and progress, times read by hand and kept only when they could be true,
tags kept once in order, and the bounded read of a source file."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import Enum
from pathlib import Path

from san_desktop.core.errors import SanError
from san_desktop.core.inputs import read_file
from san_desktop.core.text import RejectedContentError, decode_bytes, format_size
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

# The months as the languages Kindle ships write them (English, German, French, Spanish, Italian, Portuguese,
# Dutch; Russian in the genitive, as a date has it), for dates written out: "Montag, 4. März 2024 22:11:12",
# "lundi 4 mars 2024 à 22:11:12", "lunes, 4 de marzo de 2024 22:11:12", "4 марта 2024 г. в 22:11:12".
_MONTH_NAMES = (
    {
        name: number
        for names in (
            "january february march april may june july august september october november december",
            "januar februar märz april mai juni juli august september oktober november dezember",
            "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
            "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
            "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
            "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
            "januari februari maart april mei juni juli augustus september oktober november december",
            "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
        )
        for number, name in enumerate(names.split(), 1)
    }
    | {"jänner": 1, "setiembre": 9, "sept": 9}
    | {name[:3]: number for name, number in _MONTHS.items()}
)
# "2024년 3월 4일 월요일 오후 10:11:12" (Korean), "2024年3月4日月曜日 22:11:12" (Japanese), "2024年3月4日星期一"
# (Chinese)
_YEAR_MONTH_DAY = re.compile(r"(?P<year>\d{4})\s*[年년]\s*(?P<month>\d{1,2})\s*[月월]\s*(?P<day>\d{1,2})\s*[日일]")
_DAY_MONTH_YEAR = re.compile(
    r"(?P<day>\d{1,2})\.?\s+(?:de\s+)?(?P<month>[^\W\d_]+)\.?,?\s+(?:de\s+)?(?P<year>\d{4}|\d{2}\b)"
)
_MONTH_DAY_YEAR = re.compile(r"(?P<month>[^\W\d_]+)\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>\d{4})")
_CLOCK = re.compile(
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?(?:[.,]\d+)?\s*(?:uhr\b)?\s*(?P<half>[ap]\.?\s?m\b\.?)?",
    re.IGNORECASE,
)
# Korean, Chinese and Japanese write the half of the day before the time
_AFTERNOON, _MORNING = ("오후", "下午", "午後"), ("오전", "上午", "午前")

# Something saved before 1970 or more than a day from now (a clock a few hours off is no error) is a misread or a
# damaged value ("time_added" of 99999999999999999999 is the year 5138), not when it was saved.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)


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
    return decode_source(read_file(path, SOURCE_MAX_BYTES), path.name)


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` (not UTF-16) is binary rather than text with a few stray NUL bytes (a damaged export):
    binary files have NULs everywhere."""
    nuls = data.count(b"\x00")
    return nuls > max(16, len(data) // 1000)


def decode_source(data: bytes, name: str) -> str:
    """``core.text.decode_bytes``, except that a few stray NUL characters stay in the text, for the reader to
    leave out what holds them and say so, rather than the whole file being refused as binary."""
    if b"\x00" not in data or data.startswith((b"\xff\xfe", b"\xfe\xff")) or looks_binary(data):
        return decode_bytes(data, name)
    decode_bytes(data.replace(b"\x00", b""), name)  # refuses what is not text once the NULs are gone
    for encoding in ("utf-8-sig", "cp949"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise RejectedContentError(f"{name} is not valid UTF-8 (or another known text encoding); nothing was scrapped.")


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


class TimeFormat(Enum):
    """How a source writes its times; ``read_time`` tries the formats it is given in order."""

    EPOCH = "seconds since 1970"  # bookmarks, Pocket; milli- or microseconds are scaled down
    ISO = "ISO 8601"  # 2024-03-04, 2024-03-04 22:11:12+00:00, …T22:11Z
    ENGLISH = "written out in English"  # with its time: March 4, 2024 10:11 PM (Readwise, Kindle)
    WRITTEN = "written out"  # in the languages Kindle ships, with or without its time


@dataclass(frozen=True)
class TimeRead:
    """A time read from a source: ``moment`` (aware) when it could be true, else None and, for a value that was
    there, ``warning``: why the item is dated by the import instead, naming the value."""

    moment: datetime | None
    warning: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        return (self.warning,) if self.warning else ()


def plausible(moment: datetime) -> bool:
    """Whether an aware ``moment`` could be when something was saved: from 1970 to a day from now."""
    return EARLIEST <= moment <= datetime.now(UTC) + FUTURE_SLACK


def read_time(value: str, *formats: TimeFormat) -> TimeRead:
    """The time in ``value`` in the first of ``formats`` that reads it, if ``plausible``. Blank, or zero seconds
    since 1970, is no time and no warning; anything else that gives no time says so."""
    text = value.strip()
    if not text or (TimeFormat.EPOCH in formats and _is_zero(text)):
        return TimeRead(None)
    found = next((moment for one in formats if (moment := _READERS[one](text)) is not None), None)
    if found is None:
        return TimeRead(None, f"its date “{text}” could not be read: it is dated by the import")
    if not plausible(found):
        return TimeRead(None, f"its date “{text}” (the year {found.year}) cannot be right: it is dated by the import")
    return TimeRead(found)


def from_epoch(value: str) -> datetime | None:
    """Seconds since 1970 (as bookmarks and Pocket write them); milli- or microseconds are scaled down.
    Anything else, zero and impossible times included, is no time at all."""
    return read_time(value, TimeFormat.EPOCH).moment


def parse_iso(text: str) -> datetime | None:
    """An ISO-8601 date or time (``2024-03-04``, ``2024-03-04 22:11:12+00:00``, ``…T22:11Z``), aware; else None."""
    return read_time(text, TimeFormat.ISO).moment


def parse_english_date(text: str) -> datetime | None:
    """A date written out in English with its time, read as local time; anything else is no time."""
    return read_time(text, TimeFormat.ENGLISH).moment


def parse_written_date(text: str) -> datetime | None:
    """A date written out in one of the languages Kindle ships, read as local time; anything else is no time."""
    return read_time(text, TimeFormat.WRITTEN).moment


def _is_zero(text: str) -> bool:
    try:
        return float(text) == 0
    except ValueError:
        return False


def _epoch(text: str) -> datetime | None:
    try:
        seconds = float(text)
    except ValueError:
        return None
    while seconds > 1e11:  # a time in milliseconds or microseconds (year 5138 in seconds)
        seconds /= 1000
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _iso(text: str) -> datetime | None:
    try:
        return aware(datetime.fromisoformat(text))
    except ValueError:
        return None


def _english(text: str) -> datetime | None:
    match = next((found for pattern in _ENGLISH_DATES if (found := pattern.match(text))), None)
    if not match or match["month"].lower() not in _MONTHS:
        return None
    hour = int(match["hour"])
    if match["half"]:
        hour = hour % 12 + (12 if match["half"].lower().startswith("p") else 0)
    return _local(
        int(match["year"]), _MONTHS[match["month"].lower()], int(match["day"]),
        hour, int(match["minute"]), int(match["second"] or 0),
    )  # fmt: skip


def _written(text: str) -> datetime | None:
    """The first date in ``text`` (year-month-day with 年/년, or a month's name with its day and year either
    way round), and the time after it if there is one (else local midnight)."""
    found: list[tuple[int, int, int, int, int]] = []  # (start, end, year, month, day) of each date read
    if match := _YEAR_MONTH_DAY.search(text):
        found.append((match.start(), match.end(), int(match["year"]), int(match["month"]), int(match["day"])))
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        for match in pattern.finditer(text):
            month = _MONTH_NAMES.get(match["month"].casefold())
            if month is not None:
                year = int(match["year"])
                found.append(
                    (match.start(), match.end(), year + 2000 if year < 100 else year, month, int(match["day"]))
                )
                break
    if not found:
        return None
    _start, end, year, month, day = min(found)
    clock = _CLOCK.search(text, end)
    if clock is None:
        return _local(year, month, day)
    hour, between = int(clock["hour"]), text[end : clock.start()]
    if clock["half"] or any(word in between for word in (*_AFTERNOON, *_MORNING)):
        afternoon = clock["half"].lower().startswith("p") if clock["half"] else any(w in between for w in _AFTERNOON)
        hour = hour % 12 + (12 if afternoon else 0)
    return _local(year, month, day, hour, int(clock["minute"]), int(clock["second"] or 0))


def _local(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime | None:
    """That time in local time, aware; None for a day or time that does not exist (February 30, 25:00)."""
    try:
        return aware(datetime(year, month, day, hour, minute, second))
    except (ValueError, OverflowError):
        return None


_READERS: dict[TimeFormat, Callable[[str], datetime | None]] = {
    TimeFormat.EPOCH: _epoch,
    TimeFormat.ISO: _iso,
    TimeFormat.ENGLISH: _english,
    TimeFormat.WRITTEN: _written,
}


def is_web_address(address: str) -> bool:
    """Whether ``address`` is one http(s) address with a host, as a URL item needs."""
    if not is_web_url(address):
        return False
    try:
        normalize_url(address)
    except ValueError:
        return False
    return True
