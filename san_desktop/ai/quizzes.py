"""Recall quizzes from cards: what a quiz draft is, how an answer is checked against its card (a quiz whose
answer is not in its card is dropped, whoever made it), how a learner's typed answer is compared with the
accepted ones, and how the embedded provider makes quizzes offline (a cloze on a key term; a true
statement from the card, or a false one with a key term swapped for the nearest in meaning of the technical
terms of the other cards).
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Sequence

from san_desktop.ai.base import QuizDraft, TilCard, split_sentences
from san_desktop.ai.lexicon import KNOWN_TERMS
from san_desktop.ai.time_limit import check_time
from san_desktop.ai.wordclass import is_name, strip_korean_particle, tokens
from san_desktop.core.enums import QuizType

BLANK = "_____"
OX_TRUE, OX_FALSE = "O", "X"
# an OX statement is about its card when at least this share of its content words are the card's
STATEMENT_OVERLAP = 0.5


# --- checking -------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Lower-cased words without punctuation, Korean words without their particle."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)
    return [strip_korean_particle(word) if "가" <= word[0] <= "힣" else word for word in text.split()]


def normalize_answer(text: str) -> str:
    """What answers are compared by: case, spacing, punctuation and Korean particles do not count."""
    return "".join(_words(text))


def answer_matches(typed: str, answer: str, accepted: Sequence[str] = ()) -> bool:
    typed_key = normalize_answer(typed)
    return bool(typed_key) and any(typed_key == normalize_answer(option) for option in (answer, *accepted))


def card_text(card: TilCard) -> str:
    return "\n".join((card.title, card.summary, " ".join(card.tags)))


def verify(draft: QuizDraft, card: TilCard) -> bool:
    """Whether ``draft`` can be checked against ``card``: a short answer must be found in the card; an OX
    statement must be about the card (most of its content words are the card's) and say O or X."""
    text = card_text(card)
    if draft.quiz_type is QuizType.SHORT_ANSWER:
        answer = normalize_answer(draft.answer)
        return bool(answer) and answer in normalize_answer(text) and bool(draft.question.strip())
    if draft.answer not in (OX_TRUE, OX_FALSE):
        return False
    statement = {key for key, _surface in tokens(draft.question)}
    if not statement:
        return False
    known = {key for key, _surface in tokens(text)}
    return len(statement & known) / len(statement) >= STATEMENT_OVERLAP


# --- the embedded provider's quizzes --------------------------------------------------------------


def _key_terms(card: TilCard) -> list[str]:
    """Terms of the card that its summary says, best first: technical ones (names, known terms) before
    the rest, tags before the summary's keywords (a blank on "another" asks nothing worth knowing)."""
    # Making quizzes (on a worker) loads the local provider and the encoder, with numpy; checking a typed
    # answer (the Quizzes page, on the window's start) needs neither.
    from san_desktop.ai.local import keyword_scores

    summary = card.summary.casefold()
    found = [tag for tag in card.tags if tag and tag.casefold() in summary]
    scores, surfaces = keyword_scores(card.summary)
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    found += [surfaces[key] for key in ranked if surfaces[key].casefold() in summary]
    unique: list[str] = []
    for term in found:
        if term.casefold() not in {known.casefold() for known in unique} and len(term) >= 2:
            unique.append(term)
    return sorted(unique, key=lambda term: not _technical(term))  # stable: the order above within each


def _sentence_with(card: TilCard, term: str, avoid: str | None = None) -> str | None:
    """The first sentence of the summary with ``term`` in it (one other than ``avoid`` if there is one)."""
    found = [
        sentence
        for sentence in split_sentences(card.summary)
        if term.casefold() in sentence.casefold() and len(tokens(sentence)) >= 3
    ]
    others = [sentence for sentence in found if sentence != avoid]
    if others:
        return others[0]
    return found[0] if found else None


def _replace(sentence: str, term: str, by: str) -> tuple[str, str]:
    """``sentence`` with every ``term`` (any case) replaced, and the term as the sentence wrote it."""
    pattern = re.compile(re.escape(term), re.IGNORECASE)
    match = pattern.search(sentence)
    surface = match.group(0) if match else term
    return pattern.sub(by, sentence), surface


def _cloze(card: TilCard, terms: list[str]) -> tuple[QuizDraft, str] | None:
    """A cloze on the best key term, and the sentence it blanks."""
    for term in terms:
        sentence = _sentence_with(card, term)
        if sentence is None:
            continue
        question, surface = _replace(sentence, term, BLANK)
        accepted = tuple({term, surface} - {surface})
        explanation = f"From “{card.title}”: {sentence}"
        return QuizDraft(card.card_id, QuizType.SHORT_ANSWER, question, surface, accepted, explanation), sentence
    return None


def _hangul(term: str) -> bool:
    return any("가" <= ch <= "힣" for ch in term)


def _technical(term: str) -> bool:
    """A name or a known term (SQLite, useEffect, 트랜잭션), not an ordinary word a swap would give away."""
    return is_name(term) or term.casefold() in KNOWN_TERMS


def _swap_candidates(card: TilCard, term: str, terms_of: dict[str, tuple[TilCard, list[str]]]) -> list[str]:
    """Technical terms of other cards (of the same category first), in the script of ``term``, that this
    card never says: a statement with one of them instead of ``term`` is plausible but false."""
    text = card_text(card).casefold()
    others = [entry for card_id, entry in terms_of.items() if card_id != card.card_id]
    ordered = [e for e in others if e[0].category == card.category] + [
        e for e in others if e[0].category != card.category
    ]
    found: list[str] = []
    for _other, terms in ordered:
        for candidate in terms:
            fits = _technical(candidate) and _hangul(candidate) == _hangul(term)
            if fits and candidate.casefold() not in text and candidate not in found:
                found.append(candidate)
    return found


def _nearest_in_meaning(term: str, candidates: list[str]) -> str:
    """The candidate nearest to ``term`` in meaning (PostgreSQL for SQLite, not a readiness probe): the
    false statement stays plausible. Without the sentence encoder, one chosen by the term (a re-run makes
    the same quiz)."""
    import numpy as np

    from san_desktop.ai import encoder  # see _key_terms

    if len(candidates) > 1 and encoder.usable():
        try:
            vectors = encoder.encode([term, *candidates])
        except encoder.EncoderUnavailableError:
            pass
        else:
            return candidates[int(np.argmax(vectors[1:] @ vectors[0]))]
    return candidates[zlib.crc32(term.encode()) % len(candidates)]


def _statement(
    card: TilCard, terms: list[str], terms_of: dict[str, tuple[TilCard, list[str]]], avoid: str | None
) -> QuizDraft | None:
    """True or false (chosen by the card's id, so a re-run makes the same quiz), from another sentence than
    the cloze's (``avoid``) where the card has one: a true statement would give the cloze's answer away."""
    for term in terms:
        sentence = _sentence_with(card, term, avoid)
        if sentence is None:
            continue
        swaps = _swap_candidates(card, term, terms_of) if _technical(term) else []
        if zlib.crc32(card.card_id.encode()) % 2 and swaps:
            false, _surface = _replace(sentence, term, _nearest_in_meaning(term, swaps))
            explanation = f"False. The card “{card.title}” says: {sentence}"
            return QuizDraft(card.card_id, QuizType.OX, false, OX_FALSE, (), explanation)
        return QuizDraft(card.card_id, QuizType.OX, sentence, OX_TRUE, (), f"True, as “{card.title}” says.")
    return None


def local_quizzes(cards: Sequence[TilCard], quiz_types: Sequence[QuizType]) -> list[QuizDraft]:
    """Offline quizzes for ``cards`` (a day's): for each card, one of each type it has a key term for."""
    terms_of = {card.card_id: (card, _key_terms(card)) for card in cards}  # once each: swaps look at all
    drafts: list[QuizDraft] = []
    for card, terms in terms_of.values():
        check_time()
        cloze = _cloze(card, terms) if QuizType.SHORT_ANSWER in quiz_types else None
        if cloze is not None:
            drafts.append(cloze[0])
        if QuizType.OX in quiz_types:
            used = cloze[1] if cloze is not None else None
            if (statement := _statement(card, terms, terms_of, used)) is not None:
                drafts.append(statement)
    return drafts
