"""TIL sections by meaning and category: average linkage on the calibrated chance of one topic, with a
category's cards held together unless meaning says they are apart."""

from __future__ import annotations

import numpy as np

from san_desktop.ai.base import TilCard
from san_desktop.ai.topics import group_by_meaning


def _card(card_id: str, category: str, tags: tuple[str, ...] = (), title: str = "") -> TilCard:
    return TilCard(card_id, title or f"Card {card_id}", "", tags, category, None)


def _vectors(*angles: float) -> np.ndarray:
    """Unit vectors in a plane: the cosine of two is the cosine of their angles' difference."""
    return np.array([[np.cos(a), np.sin(a)] for a in angles], dtype=np.float32)


def _as_is(cosine: float) -> float:
    return cosine  # a model whose cosine is its chance of one topic


def _sections(groups: list[tuple[str, list[TilCard]]]) -> list[tuple[str, list[str]]]:
    return [(name, [card.card_id for card in cards]) for name, cards in groups]


def test_one_category_on_two_distant_topics_gets_two_sections_told_apart() -> None:
    cards = [
        _card("a", "Databases", ("SQLite", "WAL")),
        _card("b", "Databases", ("sqlite", "checkpoint")),
        _card("c", "Databases", ("PostgreSQL",), title="PostgreSQL VACUUM"),
    ]
    groups = group_by_meaning(cards, _vectors(0.0, 0.1, 1.5), _as_is)  # cosines 0.995, ~0.07, ~0.17
    assert _sections(groups) == [("Databases: SQLite", ["a", "b"]), ("Databases: PostgreSQL VACUUM", ["c"])]


def test_a_category_stays_one_section_when_its_cards_are_only_loosely_apart() -> None:
    cards = [_card("a", "Backend"), _card("b", "Backend")]
    groups = group_by_meaning(cards, _vectors(0.0, 1.3), _as_is)  # cosine ~0.27 + the category's 0.3
    assert _sections(groups) == [("Backend", ["a", "b"])]


def test_cards_on_one_topic_share_a_section_across_categories_named_by_the_most_common() -> None:
    cards = [_card("a", "Frontend"), _card("b", "Frontend"), _card("c", "Mobile"), _card("d", "Other")]
    groups = group_by_meaning(cards, _vectors(0.0, 0.05, 0.1, 3.0), _as_is)
    assert _sections(groups) == [("Frontend", ["a", "b", "c"]), ("Other", ["d"])]


def test_different_categories_on_different_topics_stay_apart_biggest_first_other_last() -> None:
    cards = [_card("o", "Other"), _card("x", "Security"), _card("y", "Testing/QA"), _card("z", "Testing/QA")]
    groups = group_by_meaning(cards, _vectors(0.0, 1.2, 2.4, 2.45), _as_is)
    assert _sections(groups) == [("Testing/QA", ["y", "z"]), ("Security", ["x"]), ("Other", ["o"])]
