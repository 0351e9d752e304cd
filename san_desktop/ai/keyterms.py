"""Key terms of a text for the embedded provider (issue 16): the phrases a person would file a card
under (titles are made from them in ``titles``).

Candidates are runs of topic words (``wordclass``) inside a sentence — "leader election", "Property-based
testing", "트랜잭션 격리 수준" — scored by how often their words occur, with a bonus for names (SQLite,
CSRF, useEffect), known technical terms, and the heading or first sentence. URLs, file names and code
blocks never make a term.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from san_desktop.ai.base import MAX_TAG_LENGTH, MAX_TAGS, split_sentences
from san_desktop.ai.lexicon import ENGLISH_STOPWORDS, KNOWN_TERMS
from san_desktop.ai.time_limit import check_time
from san_desktop.ai.wordclass import (
    english_topic_word,
    fold_plural,
    is_name,
    korean_topic_word,
    strip_korean_particle,
)

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
# Linear on any input (issue 23: ``\S+@\S+\.\w+`` was cubic in a token of @s): an e-mail address is
# tried only where a token starts, after a lookahead that finds its first @ without backtracking; it ends at
# the token's last ".word", as before.
URL_PATTERN = re.compile(r"(?:https?://|www\.)\S+|(?<!\S)(?=\S(?>[^\s@]*)@\S\S*?\.\w)\S*\.\w+", re.I)
_FILE_EXTENSIONS = (
    "html?|php|aspx?|jsp|py|pyc|md|markdown|txt|json|ya?ml|toml|csv|tsv|png|jpe?g|gif|svg|webp|pdf|zip|gz|tgz|tar|"
    "sh|bash|rs|go|java|kt|kts|swift|rb|c|h|cc|cpp|hpp|cs|ts|tsx|jsx|mjs|cjs|vue|css|scss|xml|ini|cfg|conf|log|db|"
    "sqlite3?|lock|exe|dll|so|dylib|bin|iso|dmg|apk|ipa|jar|war|sql|env|gradle"
)
# Tried only where a dotted name starts (a later start in the same name cannot match when its start did
# not), with parts that never give characters back: linear, where it was quadratic (issue 23).
_FILE_NAME = re.compile(rf"(?<![\w\-])(?<![\w\-]\.)[\w\-]++(?:\.[\w\-]++)*\.(?:{_FILE_EXTENSIONS})\b", re.I)
FILE_NAME_TAIL = re.compile(rf"\.(?:{_FILE_EXTENSIONS})$", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#_]*(?:[.\-'][A-Za-z0-9+#_]+)*|[가-힣]+|\d+(?:\.\d+)?")
# a heading line whole; its closing #s are stripped in ``heading`` (a lazy text before ``\s*#*\s*$`` was
# cubic in a run of spaces, issue 23)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$", re.M)
LEADING_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "our", "your", "my", "its"})
_AFTER_VERB = LEADING_DETERMINERS | frozenset(
    "every each all any some no their his her it them you us both only its one two many much".split()
)
_BEFORE_VERB = frozenset("and or that which who it also then".split())  # "… and replicates its log"


@dataclass(frozen=True)
class Word:
    key: str  # lower case English, or a Korean stem
    surface: str
    start: int
    end: int
    topic: bool  # may be (part of) a term
    particle: bool  # a Korean particle or ending followed it: a term ends here


@dataclass(frozen=True)
class Term:
    key: str  # the words' keys joined by spaces: one spelling per term, however it was written
    surface: str
    score: float
    first: int  # where it first occurs (title words keep the text's order)
    words: tuple[str, ...]


def prose(text: str) -> str:
    """The text a term may come from: no code blocks, URLs, e-mail addresses or file names."""
    text = _FENCE.sub("\n", text)
    text = URL_PATTERN.sub(" ", text)
    text = _FILE_NAME.sub(" ", text)
    return text.replace("`", " ")


def words_of(sentence: str) -> list[Word]:
    found: list[Word] = []
    for match in _WORD.finditer(sentence):
        raw = match.group(0)
        previous = found[-1] if found else None
        if "가" <= raw[0] <= "힣" and previous is not None and previous.end == match.start() and len(raw) <= 3:
            # "Debezium으로", "p99를": a particle of the word before, not a word
            found[-1] = replace(previous, particle=True, end=match.end())
            continue
        if raw[0].isdigit():
            found.append(Word(raw, raw, match.start(), match.end(), False, True))
            continue
        if "가" <= raw[0] <= "힣":
            stem = strip_korean_particle(raw)
            found.append(Word(stem, stem, match.start(), match.end(), korean_topic_word(stem), stem != raw))
            continue
        surface = raw.rstrip(".'")
        key = fold_plural(surface.lower())
        topic = is_name(surface) or (len(key) >= 2 and english_topic_word(key)) or key in KNOWN_TERMS
        if key.endswith("'s"):
            key, surface, topic = key[:-2], surface[:-2], topic and len(key) > 3
        found.append(Word(key, surface, match.start(), match.end(), topic, False))
    return _verbs_in_context(found)


def _verbs_in_context(words: list[Word]) -> list[Word]:
    """ "Event sourcing stores every change": a lower-case -s word between a topic and a determiner is the
    verb, not part of the topic."""
    for index in range(1, len(words) - 1):
        word = words[index]
        if (
            word.topic
            and word.surface.islower()
            and word.surface.endswith("s")
            and not word.surface.endswith(("ss", "us", "is"))
            and word.key not in KNOWN_TERMS
            and (words[index - 1].topic or words[index - 1].key in _BEFORE_VERB)
            and words[index + 1].key in _AFTER_VERB
        ):
            words[index] = replace(word, topic=False)
    return words


def _runs(sentence: str) -> list[list[Word]]:
    """Runs of adjacent topic words (only spaces or a hyphen between them, no particle inside)."""
    runs: list[list[Word]] = []
    current: list[Word] = []
    previous: Word | None = None
    for word in words_of(sentence):
        joined = (
            previous is not None
            and current
            and not previous.particle
            and sentence[previous.end : word.start] in (" ", "-")
        )
        if not word.topic:
            if current:
                runs.append(current)
            current = []
        elif joined:
            current.append(word)
        else:
            if current:
                runs.append(current)
            current = [word]
        previous = word
    if current:
        runs.append(current)
    return runs


def heading(text: str) -> str | None:
    """The text's first markdown heading, or a short first line standing alone above the body."""
    body = _FENCE.sub("\n", text).strip()
    found = _HEADING.search(body)
    if found and found.start() < 400:
        line = found.group(1).strip()
        return line.rstrip("#").rstrip() or line  # "## Title ##": the closing #s are not the title
    lines = body.split("\n")
    first = lines[0].strip().rstrip(":")
    if not prose(first).strip():
        return None  # a link on a line of its own is not a heading
    sentence_inside = re.search(r"[.!?]\s", first)
    if (
        len(lines) > 1
        and not lines[1].strip()
        and 0 < len(first) <= 60
        and not sentence_inside
        and first[-1] not in ".!?"
    ):
        return first.lstrip("*>- ").strip() or None
    return None


def key_terms(text: str, limit: int = 12) -> list[Term]:
    """The best terms of ``text``, best first; terms sharing a word with a better one are left out."""
    body = prose(text)
    sentences = [s for s in split_sentences(body) if s.strip()][:300]
    if not sentences:
        return []
    counts: Counter[str] = Counter()
    capitalised: Counter[str] = Counter()  # occurrences written with a capital (Celery, Prometheus)
    spellings: dict[str, Counter[str]] = {}  # lower-case spellings of a folded key ("cookies", "cookie")
    surfaces: dict[str, str] = {}
    phrase_counts: Counter[str] = Counter()
    phrases: dict[str, list[Word]] = {}
    first_seen: dict[str, int] = {}
    head_keys: set[str] = set()
    top = heading(text)
    lead = {w.key for w in words_of(top or sentences[0])}
    offset = 0
    for index, sentence in enumerate(sentences):
        check_time()
        for run in _runs(sentence):
            for word in run:
                counts[word.key] += 1
                spellings.setdefault(word.key, Counter())[word.surface.lower()] += 1
                if word.surface[:1].isupper():
                    capitalised[word.key] += 1
                    surfaces.setdefault(word.key, word.surface)
                if word.key not in surfaces or is_name(word.surface):
                    surfaces[word.key] = word.surface
                first_seen.setdefault(word.key, offset + word.start)
                if index == 0 or word.key in lead:
                    head_keys.add(word.key)
            for size in (2, 3):
                for start in range(len(run) - size + 1):
                    piece = run[start : start + size]
                    key = " ".join(w.key for w in piece)
                    phrase_counts[key] += 1
                    phrases.setdefault(key, piece)
                    first_seen.setdefault(key, offset + piece[0].start)
        offset += len(sentence) + 1
    for key in counts:
        # a word always written with a capital is a name (Celery, Prometheus); else it is shown in lower case
        if not is_name(surfaces[key]) and capitalised[key] < counts[key]:
            surfaces[key] = spellings[key].most_common(1)[0][0]
    proper = {key for key in counts if key.isascii() and capitalised[key] == counts[key] and counts[key] >= 2}

    def word_score(key: str) -> float:
        score = 1.0 + math.log(counts[key])
        if key in head_keys:
            score += 0.6
        if is_name(surfaces[key]):
            score *= 1.7
        elif key in proper:
            score *= 1.5
        elif key in KNOWN_TERMS:
            score *= 1.4
        elif key.isascii() and counts[key] < 3:
            score *= 0.7  # an ordinary English word met once or twice ("task", "worker") is a weak tag
        if len(key) <= 2 and not is_name(surfaces[key]) and not ("가" <= key[0] <= "힣"):
            score *= 0.5
        return score * min(1.3, 0.8 + len(key) / 12)

    candidates: list[Term] = [
        Term(key, surfaces[key], word_score(key), first_seen[key], (key,))
        for key in counts
        if _tag_shaped(key) and not _modifier(key)
    ]
    for key, count in phrase_counts.items():
        piece = phrases[key]
        in_heading = top is not None and key in " ".join(w.key for w in words_of(top))
        technical = sum(1 for w in piece if is_name(w.surface) or w.key in KNOWN_TERMS)
        if _modifier(piece[-1].key):
            continue  # "… appended": a phrase ends in its noun
        if count < 2 and not in_heading and technical < len(piece):
            continue  # a noun pile met once ("state machine" twice or in the heading is a term)
        if len(piece) == 3 and count < 2 and not in_heading:
            continue
        score = sum(word_score(w.key) for w in piece) / math.sqrt(len(piece)) * (1.0 + 0.3 * (count - 1))
        surface = " ".join(surfaces[w.key] for w in piece)  # each word as the text spells it most
        candidates.append(Term(key, surface, score, first_seen[key], tuple(w.key for w in piece)))
    candidates.sort(key=lambda term: (-term.score, term.first))
    chosen: list[Term] = []
    used: dict[str, int] = {}  # word → how often the chosen phrase holding it occurs
    for term in candidates:
        overlap = [used[word] for word in term.words if word in used]
        # a name may stand beside a phrase holding it when it also occurs without it ("WAL" beside "WAL
        # mode"), never as its echo ("READ" beside "REPEATABLE READ"); other words may not
        if overlap and not (len(term.words) == 1 and is_name(term.surface) and counts[term.key] > max(overlap)):
            continue
        chosen.append(term)
        occurrences = phrase_counts[term.key] if len(term.words) > 1 else counts[term.key]
        for held in term.words:
            used[held] = max(used.get(held, 0), occurrences)
        if len(chosen) == limit:
            break
    return chosen


def _modifier(key: str) -> bool:
    """A past participle ("appended", "distributed"): part of a phrase, never a term by itself."""
    return key.isascii() and key.endswith("ed") and len(key) > 4 and key not in KNOWN_TERMS


def _tag_shaped(key: str) -> bool:
    return (
        len(key) >= 2
        and key not in ENGLISH_STOPWORDS
        and "/" not in key
        and not FILE_NAME_TAIL.search(key)
        and not key.isdigit()
    )


def tags(terms: list[Term]) -> tuple[str, ...]:
    """Up to ``MAX_TAGS`` tags from the best terms."""
    picked: list[str] = []
    for term in terms:
        if len(term.surface) <= MAX_TAG_LENGTH and len(term.words) <= 3:
            picked.append(term.surface)
        if len(picked) == MAX_TAGS:
            break
    return tuple(picked)
