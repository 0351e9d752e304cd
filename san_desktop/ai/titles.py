"""Titles for the embedded provider (issue 16): the text's heading when it has one (its first clause when
it is long), else the subject its first sentence starts with when that names a topic ("Property-based
testing with Hypothesis", "플러터 StatelessWidget과 StatefulWidget의 차이"), else its best terms; a link
alone is named by its address. Every title is fitted to its limit by whole words, never with "…".
"""

from __future__ import annotations

import re

from san_desktop.ai.base import fit_words, is_mostly_korean, split_sentences, title_limit
from san_desktop.ai.keyterms import (
    FILE_NAME_TAIL,
    LEADING_DETERMINERS,
    URL_PATTERN,
    Term,
    Word,
    heading,
    prose,
    words_of,
)
from san_desktop.ai.wordclass import KOREAN_NOT_TOPICS, is_name

# words that may join the nouns of a title: "testing with Hypothesis", "Flutter의 StatelessWidget"
_TITLE_JOINERS = frozenset({"with", "of", "for", "in", "on", "and", "vs", "vs.", "versus", "to", "&"})


def link_words(text: str) -> str:
    """For a text that is only a link, the words its address is made of:
    ``https://blog.example/2024/raft-leader-election.html`` → "raft leader election". Empty otherwise."""
    if any(ch.isalpha() for ch in prose(text)):
        return ""
    addresses = URL_PATTERN.findall(text)
    if not addresses:
        return ""
    address = addresses[0]
    path = re.sub(r"^\w+://[^/]+", "", address).split("?", 1)[0].split("#", 1)[0]
    words = ""
    for segment in path.split("/"):
        segment = FILE_NAME_TAIL.sub("", segment)
        parts = [part for part in re.split(r"[-_.+]+", segment) if part.isalpha() and len(part) > 1]
        if parts:
            words = " ".join(parts)
    if len(words.split()) == 1:  # "wal" says little without its site: "sqlite wal"
        host = re.sub(r"^\w+://", "", address).split("/", 1)[0].split(":", 1)[0].lower()
        labels = [label for label in host.split(".")[:-1] if label not in _GENERIC_HOST_LABELS]
        words = " ".join(part for part in (labels[-1] if labels else "", words) if part)
    return words


_GENERIC_HOST_LABELS = frozenset("www blog blogs docs doc en m developer developers api dev wiki news co".split())


def title(text: str, terms: list[Term]) -> str:
    """A title within its limit (60 characters, 20 for Korean), cut only between words, never with "…"."""
    top = heading(text)
    for candidate in (_short_heading(top) if top else None, _subject(text), _from_terms(terms)):
        if candidate:
            fitted = re.sub(r"'s$", "", fit_words(candidate, title_limit(candidate)))
            if fitted and any(ch.isalpha() for ch in fitted):
                first = fitted.split(" ", 1)[0]
                return fitted[0].upper() + fitted[1:] if first.islower() and first.isascii() else fitted
    host = re.search(r"https?://(?:www\.)?([^/\s:?#]+)", text)
    return host.group(1) if host else "Untitled scrap"


_HEADING_BREAKS = re.compile(r"[:;,?!(]\s|\s[—–-]\s|\.\s")


def _short_heading(top: str) -> str | None:
    """A long heading's first clause ("Kubernetes readiness vs liveness probes, because…" → before the
    comma); a heading that is a long Korean sentence gives its subject."""
    limit = title_limit(top)
    if len(top) <= min(limit, 40):
        return top
    found = _HEADING_BREAKS.search(top)
    if found and len(top[: found.start()]) >= 8:
        top = top[: found.start() + (1 if top[found.start()] in "?!" else 0)]
        if len(top) <= limit:
            return top
    if is_mostly_korean(top):
        return _subject(top) or top
    return top


def _subject(text: str) -> str | None:
    """The topic words a text's first sentence starts with, when they name something: "Property-based
    testing with Hypothesis" (… generates inputs), "React의 useEffect" (…는 렌더링 후에 실행된다)."""
    sentences = split_sentences(prose(text))
    if not sentences:
        return None
    sentence = sentences[0]
    words = words_of(sentence)
    if not words:
        return None
    if is_mostly_korean(sentence):
        return _korean_subject(sentence, words)
    kept: list[Word] = []
    following: Word | None = None  # the word the subject stops at (its verb, when it is one)
    for word in words:
        if not kept and word.key in LEADING_DETERMINERS:
            continue
        joins = word.topic and not (kept and _separated(sentence, kept[-1], word))
        if joins or (word.key in _TITLE_JOINERS and kept):
            kept.append(word)
        else:
            following = word
            break
    while kept and kept[-1].key in _TITLE_JOINERS:
        kept.pop()
    topics = [w for w in kept if w.topic]
    if not topics or len(kept) > 7:
        return None
    named = is_name(topics[0].surface) or (
        topics[0].surface[:1].isupper() and following is not None and not following.topic
    )
    if len(topics) == 1 and not named and len(words) > 3:
        return None  # a lone ordinary word ("indexes") says less than the best terms; "Raft elects …" names
    return sentence[kept[0].start : kept[-1].end]


def _separated(sentence: str, before: Word, after: Word) -> bool:
    return bool(re.search(r"[,;:()\[\]]", sentence[before.end : after.start]))


def _korean_subject(sentence: str, words: list[Word]) -> str | None:
    """The words before the subject's particle: "플러터에서 StatelessWidget과 StatefulWidget의 차이는 …" →
    "플러터 StatelessWidget과 StatefulWidget의 차이" (joining particles kept, place particles dropped)."""
    pieces: list[str] = []
    previous: Word | None = None
    for word in words:
        raw = sentence[word.start : word.end]
        short_noun = _short_korean_noun(word)
        if not (word.topic or short_noun or is_name(word.surface)) or (
            previous is not None and _separated(sentence, previous, word)
        ):
            break
        previous = word
        if not word.particle:
            pieces.append(raw)
            continue
        if raw.endswith(_JOINING_PARTICLES):
            pieces.append(raw)
            continue
        pieces.append(_stem_of(raw, word))
        if not raw.endswith(_PLACE_PARTICLES):
            break  # the subject's (or object's) particle ends it
    if not pieces or len(pieces) > 5 or pieces[-1].endswith(_JOINING_PARTICLES):
        return None
    return " ".join(pieces)


_JOINING_PARTICLES = ("의", "와", "과")
_PLACE_PARTICLES = ("에서", "에서의", "으로", "에", "로")


def _short_korean_noun(word: Word) -> bool:
    """A one-syllable noun before its particle: 훅은, 앱을."""
    return len(word.key) == 1 and "가" <= word.key <= "힣" and word.particle and word.key not in KOREAN_NOT_TOPICS


def _stem_of(raw: str, word: Word) -> str:
    """A word without its particle, as written ("Debezium으로" → "Debezium", "훅은" → "훅")."""
    if "가" <= raw[0] <= "힣":
        return word.key
    return word.surface


def _from_terms(terms: list[Term]) -> str | None:
    if not terms:
        return None
    best = terms[0]
    if len(best.words) > 1 or len(terms) == 1:
        return best.surface
    second = terms[1]
    pair = sorted((best, second), key=lambda term: term.first)
    return f"{pair[0].surface} {pair[1].surface}"
