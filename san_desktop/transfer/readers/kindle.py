"""Kindle's ``My Clippings.txt``: entries between separator lines (``==========``), each a book line, a line that
says what it is (highlight, note, bookmark), where and when, then the text. That line is in the device's language:
``- Your Highlight on page 12 | Location 123-125 | Added on Monday, March 4, 2024 10:11:12 PM``,
``- 위치 123-125의 하이라이트 | 추가된 날짜: 2024년 3월 4일 월요일 오후 10:11:12``,
``- 位置No. 123-125のハイライト |作成日: 2024年3月4日月曜日 22:11:12``,
``- Ihre Markierung bei Position 123-125 | Hinzugefügt am Montag, 4. März 2024 22:11:12``,
``- Votre surlignement sur la page 12 | emplacement 123-125 | Ajouté le lundi 4 mars 2024 22:11:12``,
``- Tu subrayado en la posición 123-125 | Añadido el lunes, 4 de marzo de 2024 22:11:12``.

Kindle never rewrites the file: extending a highlight appends a new entry and keeps the old one, so of two
overlapping highlights of a book only the later (else the longer) is kept. A note at a location inside a
highlight is that highlight's note. Every entry is accounted for: an item, merged into one (``plan.merged``), or
left out with why (``plan.refused``), each named by its book and place (``Book (Author), location 120-126``)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from san_desktop.core.enums import SourceType
from san_desktop.core.text import RejectedContentError, check_capturable
from san_desktop.transfer.items import ImportItem, ImportKind, ImportPlan, Merge, Refusal
from san_desktop.transfer.readers._common import Ticker, TimeFormat, TimeRead, read_time

SEPARATOR = "=========="
# Kindle writes ten; some tools that merge or clean the file write more or fewer (at least ten are taken).
_SEPARATOR = re.compile(r"\ufeff?={10,}")
# "- Your Highlight on page 12 | Location 123-125 | Added on …"; the first Kindles wrote "- Highlight Loc. 240-42".
_KIND = r"^-\s*(?:Your\s+)?(?P<kind>Highlight|Note|Bookmark)\b"
ENGLISH_MARKER = re.compile(_KIND, re.IGNORECASE | re.MULTILINE)
# What each kind is called in the languages Kindle ships (and Italian, Portuguese, Dutch, Russian, Chinese, as
# other readers of the file list them); the first one on the line tells. Whole words, except in the scripts that
# do not separate words ("위치 123-125의 하이라이트", "位置No. 336のメモ").
_KIND_WORDS = {
    "bookmark": "bookmark lesezeichen signet marcador segnalibro bladwijzer закладка ブックマーク 북마크 书签",
    "note": "note notiz nota notitie заметка メモ 메모 笔记",
    "highlight": "highlight markierung surlignement surlignage subrayado destaque evidenziazione markering "
    "выделение выделенный ハイライト 하이라이트 标注",
}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _word(word: str) -> str:
    return re.escape(word) if _CJK.match(word) else r"\b" + re.escape(word) + r"\b"


_KIND_PATTERN = re.compile(
    "|".join(
        f"(?P<{kind}{index}>{_word(word)})"
        for kind, words in _KIND_WORDS.items()
        for index, word in enumerate(words.split())
    ),
    re.IGNORECASE,
)
_LOCATION = re.compile(
    r"(?:\b(?:location|loc\.|position|posición|posicion|emplacement|posizione|posição|locatie|позиция"
    r"|местоположение)|位置\s*(?:No\.)?|위치)\s*#?\s*(?P<start>\d+)(?:\s*[-–]\s*(?P<end>\d+))?",
    re.IGNORECASE,
)
_PAGE = re.compile(
    r"\b(?:page|seite|página|pagina|страниц[аеы]?)\s+(?P<latin>\d+|[ivxlcdm]+\b)|(?P<before>\d+)\s*(?:ページ|페이지)"
    r"|(?:ページ|페이지)\s*(?P<after>\d+)|第\s*(?P<chinese>\d+)\s*页",
    re.IGNORECASE,
)
# The words before the date: en, de, fr, es, it, pt, nl, ru, ja (作成日; 追加日 on older Kindles), ko, zh.
_ADDED = re.compile(
    r"(?:\badded on|hinzugefügt am|ajouté le|añadido el|aggiunto (?:il|in data)|adicionado (?:em|na data)"
    r"|toegevoegd op|добавлено|作成日|追加日|추가된 날짜|추가됨|添加于|已添加至)\s*[:：]?\s*(?P<when>.*)$",
    re.IGNORECASE,
)
# What Kindle writes instead of a passage once the publisher's share of the book has been clipped (English, then
# as other readers of the file list it in Spanish, Portuguese, German, French, Chinese and Japanese).
CLIPPING_LIMIT = "You have reached the clipping limit for this item"
_CLIPPING_LIMITS = (
    CLIPPING_LIMIT,
    "Has alcanzado el límite de recortes",
    "Você atingiu o limite de recortes",
    "Sie haben das Markierungslimit erreicht",
    "Vous avez atteint la limite",
    "您已达到本书的剪贴限制",
    "このアイテムのクリップ上限に達しました",
)
_NOTED = "a note on that highlight"


@dataclass
class Clipping:
    book: str
    kind: str  # "highlight", "note", "bookmark", or "other" (a line in a language not known here)
    text: str
    start: int | None
    end: int | None
    page: str | None
    added: TimeRead
    order: int  # its place among the file's entries
    ref: str = ""  # how the person is told which entry it is: its book and place (see ``_name``)
    notes: list[Clipping] = field(default_factory=list)
    merged: list[tuple[Clipping, str]] = field(default_factory=list)  # older highlights it replaced, and why


def is_separator(line: str) -> bool:
    return _SEPARATOR.fullmatch(line.strip()) is not None


def looks_like_clippings(text: str) -> bool:
    """Separator lines and an entry whose second line is Kindle's ``- Your …`` (or, in another language, any
    ``- …`` line right after the book's)."""
    if not any(is_separator(line) for line in text.splitlines()):
        return False
    if ENGLISH_MARKER.search(text):
        return True
    first = [line for line in text.replace("\ufeff", "").splitlines() if line.strip()][:2]
    return len(first) == 2 and first[1].lstrip().startswith("- ")


def parse_clippings(text: str, ticker: Ticker) -> tuple[list[Clipping], list[tuple[int, Refusal]]]:
    """The entries of the file, each named (``Clipping.ref``), and the blocks that are no entry at all, with their
    place among the entries."""
    clippings: list[Clipping] = []
    refused: list[tuple[int, Refusal]] = []
    order = 0
    block: list[str] = []
    line_number = start = 0
    for line_number, line in enumerate([*text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), SEPARATOR], 1):
        if not is_separator(line):
            if not block:
                start = line_number
            block.append(line)
            continue
        lines = [one.replace("\ufeff", "") for one in block]  # Kindle may put a BOM before any entry's book
        block = []
        while lines and not lines[0].strip():
            lines.pop(0)
        if not any(one.strip() for one in lines):
            continue  # two separators in a row
        ticker.tick()
        order += 1
        if len(lines) < 2 or not lines[1].strip():
            why = "not a Kindle entry: no line says what it is, where and when"
            refused.append((order, Refusal(f"line {start}", why)))
            continue
        clippings.append(_clipping(lines, order))
    _name(clippings)
    return clippings, refused


def _clipping(lines: list[str], order: int) -> Clipping:
    meta = lines[1].strip().replace("｜", "|")
    added = _ADDED.search(meta)
    if added is None:  # no words before the date: the last part, if it is not where
        parts = meta.split("|")
        last = parts[-1]
        when = last if len(parts) > 1 and not (_LOCATION.search(last) or _PAGE.search(last)) else ""
        where = meta[: len(meta) - len(when)]
    else:
        when, where = added["when"], meta[: added.start()]
    location = _LOCATION.search(where)
    start = int(location["start"]) if location else None
    end = int(location["end"]) if location and location["end"] else start
    if location and start is not None and end is not None and end < start:  # "Location 998-12" means 998-1012
        width = len(location["end"])
        end = start - start % 10**width + end
        end = end if end >= start else end + 10**width
    page = _PAGE.search(where)
    return Clipping(
        book=lines[0].strip(),
        kind=_kind(where),
        text="\n".join(lines[2:]).strip(),
        start=start,
        end=end,
        page=next((value for value in page.groups() if value), None) if page else None,
        added=read_time(when, TimeFormat.WRITTEN),
        order=order,
    )


def _kind(where: str) -> str:
    found = _KIND_PATTERN.search(where)
    if found is None or found.lastgroup is None:
        return "other"
    return found.lastgroup.rstrip("0123456789")


def _name(clippings: list[Clipping]) -> None:
    """Give each entry a name the person can find it by: its book and location (else page); entries that would
    share one also say what they are, and if that is not enough, their place in the file."""
    for clipping in clippings:
        if clipping.start is not None:
            where = f"{clipping.start}-{clipping.end}" if clipping.end != clipping.start else str(clipping.start)
            clipping.ref = f"{clipping.book}, location {where}"
        elif clipping.page is not None:
            clipping.ref = f"{clipping.book}, page {clipping.page}"
        else:
            clipping.ref = clipping.book
    for said in ("kind", "place"):
        counts = Counter(one.ref for one in clippings)
        for clipping in clippings:
            if counts[clipping.ref] > 1:
                clipping.ref += f" ({clipping.kind})" if said == "kind" else f" (entry {clipping.order})"


def read_kindle(text: str, source: str, ticker: Ticker, max_bytes: int) -> ImportPlan:
    plan = ImportPlan(kind=ImportKind.KINDLE, source=source)
    clippings, refused = parse_clippings(text, ticker)
    merged: list[tuple[int, Merge]] = []
    kept: list[Clipping] = []
    for clipping in clippings:
        reason = _refusal(clipping)
        if reason is None:
            kept.append(clipping)
        else:
            refused.append((clipping.order, Refusal(clipping.ref, reason)))
    highlights = _collapse([one for one in kept if one.kind != "note"])
    for note in (one for one in kept if one.kind == "note"):
        owner = _owner(note, highlights)
        if owner is None:
            highlights.append(note)
        else:
            owner.notes.append(note)
    for clipping in sorted(highlights, key=lambda one: one.order):
        parts = [clipping.text, *(f"Note: {note.text}" for note in clipping.notes), f"— {clipping.book}"]
        parts_of = [*_merged(clipping), *((note, _NOTED) for note in clipping.notes)]
        try:
            content = check_capturable("\n\n".join(parts), max_bytes)
        except RejectedContentError as exc:
            refused.append((clipping.order, Refusal(clipping.ref, str(exc))))
            refused += [
                (one.order, Refusal(one.ref, f"part of {clipping.ref}, which was left out")) for one, _ in parts_of
            ]
            continue
        plan.items.append(_item(clipping, content))
        merged += [(one.order, Merge(source_ref=one.ref, into=clipping.ref, reason=why)) for one, why in parts_of]
    plan.refused = [refusal for _, refusal in sorted(refused, key=lambda pair: pair[0])]
    plan.merged = [merge for _, merge in sorted(merged, key=lambda pair: pair[0])]
    ticker.finish()
    return plan


def _refusal(clipping: Clipping) -> str | None:
    """Why an entry cannot be an item or part of one, if it cannot."""
    if clipping.kind == "bookmark":
        return "a bookmark: no text"
    if not clipping.text:
        return f"an empty {clipping.kind if clipping.kind != 'other' else 'entry'}: Kindle kept no text"
    if "\x00" in clipping.text:
        return "it holds a NUL character: the file is damaged there"
    if len(clipping.text) < 2 * len(CLIPPING_LIMIT) and any(
        limit.lower() in clipping.text.lower() for limit in _CLIPPING_LIMITS
    ):
        return "Kindle kept no text: the book's clipping limit was reached"
    return None


def _item(clipping: Clipping, content: str) -> ImportItem:
    warnings = list(clipping.added.warnings)
    if clipping.kind == "other":
        warnings.append("Kindle's line did not say, in a language known here, what it is: it came in as a highlight")
    if clipping.start is None:
        identity = None  # a page holds many highlights: the content tells them apart
    elif clipping.kind == "note":
        identity = f"{clipping.book}|note {clipping.start}"  # a note on no highlight, apart from one starting there
    else:
        identity = f"{clipping.book}|{clipping.start}"
    return ImportItem(
        source_type=SourceType.TEXT,
        content=content,
        source_ref=clipping.book,
        captured_at=clipping.added.moment,
        identity=identity,
        warnings=tuple(warnings),
    )


def _merged(clipping: Clipping) -> list[tuple[Clipping, str]]:
    """The entries the kept ``clipping`` replaced, and those they had replaced, each with why."""
    found: list[tuple[Clipping, str]] = []
    for one, why in clipping.merged:
        found += [(one, why), *_merged(one)]
    return found


def _overlap(one: Clipping, other: Clipping) -> bool:
    if one.book != other.book or one.start is None or one.end is None or other.start is None or other.end is None:
        return False
    return one.start <= other.end and other.start <= one.end


def _supersedes(newer: Clipping, older: Clipping) -> bool:
    """Whether ``newer`` (later in the file) replaces ``older``: added later, or when the times do not
    tell, longer (ties go to the later entry)."""
    new_time, old_time = newer.added.moment, older.added.moment
    if new_time is not None and old_time is not None and new_time != old_time:
        return new_time > old_time
    return len(newer.text) >= len(older.text)


def _collapse(highlights: list[Clipping]) -> list[Clipping]:
    kept: list[Clipping] = []
    for highlight in highlights:
        overlapping = [one for one in kept if _overlap(one, highlight)]
        beaten_by = next((one for one in overlapping if not _supersedes(highlight, one)), None)
        if beaten_by is None:
            kept = [one for one in kept if one not in overlapping]
            highlight.merged += [(one, _why_merged(one, highlight)) for one in overlapping]
            kept.append(highlight)
        else:
            beaten_by.merged.append((highlight, _why_merged(highlight, beaten_by)))
    return kept


def _why_merged(dropped: Clipping, kept: Clipping) -> str:
    if dropped.text == kept.text and (dropped.start, dropped.end) == (kept.start, kept.end):
        return "listed twice"
    if kept.order > dropped.order:
        return "extended later"
    return "a shorter highlight of the same passage"


def _owner(note: Clipping, highlights: list[Clipping]) -> Clipping | None:
    """The highlight of the note's book whose range holds the note's location (the one ending there first)."""
    if note.start is None:
        return None
    holding = [
        one for one in highlights
        if one.kind == "highlight" and one.book == note.book and one.start is not None and one.end is not None
        and one.start <= note.start <= one.end
    ]  # fmt: skip
    if not holding:
        return None
    return max(holding, key=lambda one: (one.end == note.start, one.order))
