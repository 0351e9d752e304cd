"""A day's cards grouped by meaning for its TIL: cards on one topic share a section whatever category each
was filed under, and one category's cards on clearly different topics get a section each.

Average-linkage agglomerative clustering: the two groups with the highest mean affinity merge while it is at
least one half. A pair's affinity is the model's calibrated chance that the two are on one topic
(``on_topic``), plus ``SAME_CATEGORY`` when both were filed under one category: a category stays one section
unless meaning says its cards are apart (SQLite WAL and PostgreSQL VACUUM, both Databases: 0.04-0.08 + 0.3),
and cards on one topic merge across categories (HTTP caching in Backend, a CDN in Infra: 0.25 + 0 stay
apart; two notes on React hooks: 0.6). Each group is named by its most common category; two groups of one
category are told apart by a tag they share, else by their first card's title ("Databases: SQLite WAL mode").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from san_desktop.ai.base import FALLBACK_CATEGORY, TilCard

Groups = list[tuple[str, list[TilCard]]]
SAME_CATEGORY = 0.3
MERGE_AT = 0.5


def clusters(affinity: npt.NDArray[np.float64]) -> list[list[int]]:
    """Indexes of the rows, grouped: average linkage, merging while the closest two groups' mean affinity
    is at least ``MERGE_AT``. A day has tens of cards: the O(n³) loop is fine."""
    groups: list[list[int]] = [[row] for row in range(len(affinity))]
    while len(groups) > 1:
        best, pair = -np.inf, (0, 0)
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                mean = float(affinity[np.ix_(groups[i], groups[j])].mean())
                if mean > best:
                    best, pair = mean, (i, j)
        if best < MERGE_AT:
            break
        i, j = pair
        groups[i] = sorted(groups[i] + groups[j])
        del groups[j]
    return groups


def group_by_meaning(
    cards: Sequence[TilCard], vectors: npt.NDArray[np.float32], on_topic: Callable[[float], float]
) -> Groups:
    """The cards in sections by meaning and category (``vectors``: L2-normalised rows; ``on_topic``: the
    chance that two cards this cosine apart are on one topic), named by category (told apart when one
    category has several), the biggest first, then by name; "Other" last."""
    chance = np.vectorize(on_topic, otypes=[np.float64])(vectors @ vectors.T)
    categories = np.array([card.category or FALLBACK_CATEGORY for card in cards])
    affinity = chance + SAME_CATEGORY * (categories[:, None] == categories[None, :])
    members = [[cards[row] for row in group] for group in clusters(affinity)]
    named = [(_category(group), group) for group in members]
    counts = Counter(name for name, _group in named)
    sections: Groups = []
    for name, group in named:
        if counts[name] > 1:
            name = f"{name}: {_label(group)}"
        sections.append((name, group))
    return sorted(sections, key=lambda item: (item[0].startswith(FALLBACK_CATEGORY), -len(item[1]), item[0]))


def _category(group: Sequence[TilCard]) -> str:
    """The most common category; a tie goes to the first card's among the tied."""
    names = [card.category or FALLBACK_CATEGORY for card in group]
    counts = Counter(names)
    top = max(counts.values())
    return next(name for name in names if counts[name] == top)


def _label(group: Sequence[TilCard]) -> str:
    """A tag most of the group's cards share (spelled as the first card has it), else its first card's title."""
    tags = Counter(tag.casefold() for card in group for tag in {tag.casefold() for tag in card.tags})
    spelled = {tag.casefold(): tag for card in reversed(group) for tag in card.tags}
    shared = [tag for tag, count in tags.most_common() if count > 1 and count * 2 >= len(group)]
    return spelled[shared[0]] if shared else group[0].title
