"""Extractive summaries for the embedded provider (issue 16): TextRank over the text's sentences, two
sentences linked by the content words they share, the best ``MAX_SUMMARY_SENTENCES`` kept in the order
they were written. Headings, list markers, code blocks and sentences without words are not summary
material; a text of a few sentences keeps them all.
"""

from __future__ import annotations

import math
import re

from san_desktop.ai.base import MAX_SUMMARY_SENTENCES, split_sentences
from san_desktop.ai.keyterms import heading, prose, words_of
from san_desktop.ai.time_limit import check_time

MAX_SENTENCES_RANKED = 120  # a long text: its first sentences are ranked (the cost grows with their square)
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)
# Each of these stays on its line and gives nothing back once matched: ``^\s*`` ran on across every
# following blank line, and the table rule's overlapping classes were cubic in them (issue 23); a lone "-"
# line took the line after it for its item.
_LIST_MARKER = re.compile(r"^[ \t]*+(?:[-*+•]|\d++[.)])[ \t]+", re.M)
_LIST_LINE = re.compile(r"^[ \t]*+(?:[-*+•]|\d++[.)])[ \t]+.*$", re.M)
# a line of spaces, colons, dashes and pipes, with a pipe after its first character (|---|:--:|)
_TABLE_RULE = re.compile(r"^[ \t:|-][ \t:-]*+\|[ \t:|-]*+$", re.M)
DAMPING = 0.85
SHORTER_THAN = 0.6


def summarize(text: str) -> str:
    body = prose(text)
    body = _HEADING_LINE.sub("\n", body)
    top = heading(text)
    if top and body.lstrip().startswith(top):
        body = body.lstrip()[len(top) :]  # a title line standing alone is the title, not the summary
    body = _TABLE_RULE.sub("\n", body)
    sentences = _sentences(_LIST_LINE.sub("\n", body))
    if len(sentences) < 2:  # a text that is mostly a list: its items are what it says
        sentences = _sentences(_LIST_MARKER.sub("", body))
    if not sentences:
        return ""
    if len(sentences) <= MAX_SUMMARY_SENTENCES:
        return " ".join(sentences)
    ranked = sentences[:MAX_SENTENCES_RANKED]
    scores = _textrank([_bag(sentence) for sentence in ranked])
    order = sorted(range(len(ranked)), key=lambda i: (-(scores[i] + (0.15 if i == 0 else 0.0)), i))
    chosen = order[:MAX_SUMMARY_SENTENCES]
    # clearly shorter than the text: the weakest sentences go while the summary is over 60% of it
    while len(chosen) > 1 and sum(len(ranked[i]) for i in chosen) > SHORTER_THAN * len(" ".join(sentences)):
        chosen.pop()
    return " ".join(ranked[i] for i in sorted(chosen))


def _bag(sentence: str) -> set[str]:
    check_time()
    return {w.key for w in words_of(sentence) if w.topic}


def _sentences(text: str) -> list[str]:
    return [s for s in split_sentences(text) if sum(ch.isalpha() for ch in s) >= 4]


def _textrank(bags: list[set[str]], rounds: int = 30) -> list[float]:
    """Sentence centrality: PageRank over overlap(a, b) / (log|a| + log|b|) (Mihalcea & Tarau 2004)."""
    count = len(bags)
    weights = [[0.0] * count for _ in range(count)]
    for i in range(count):
        check_time()
        for j in range(i + 1, count):
            shared = len(bags[i] & bags[j])
            if shared and len(bags[i]) > 1 and len(bags[j]) > 1:
                weight = shared / (math.log(len(bags[i])) + math.log(len(bags[j])))
                weights[i][j] = weights[j][i] = weight
    totals = [sum(row) for row in weights]
    scores = [1.0] * count
    for _ in range(rounds):
        check_time()
        scores = [
            (1 - DAMPING) + DAMPING * sum(weights[j][i] / totals[j] * scores[j] for j in range(count) if weights[j][i])
            for i in range(count)
        ]
    return scores
