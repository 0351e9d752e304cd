"""Nearest cards by meaning on each backend (``LibraryVectors`` under ``db.vectors.nearest``: pgvector's index on
a server, the in-memory index over ``card_embeddings`` on SQLite): best first with their cosine similarity, a
card excluded when asked, a vector removed never found again once the hits are checked against the table
(``live_in_space``, as the search does), spaces of other models never compared."""

from __future__ import annotations

import math

import numpy as np
import pytest

from san_desktop.db.backends.base import backend_of
from san_desktop.db.database import Database
from san_desktop.db.vectors import nearest, warm_up
from tests.conformance.cards import MODEL, add_card, add_vector, drop_vector, unit


def _nearest(
    db: Database, vector: np.ndarray, limit: int = 10, exclude: tuple[str, ...] = ()
) -> list[tuple[str, float]]:
    with db.engine.connect() as conn:
        return nearest(conn, MODEL, vector, limit, exclude)


@pytest.fixture
def cards(library: Database) -> dict[str, str]:
    angles = {"same": 0.0, "close": 0.3, "far": 1.2, "opposite": math.pi}
    made = {}
    for name, angle in angles.items():
        made[name] = add_card(library, f"Card {name}", "A card of the suite.")
        add_vector(library, made[name], unit([math.cos(angle), math.sin(angle)]))
    return made


def test_the_nearest_cards_come_best_first_with_their_similarity(library: Database, cards: dict[str, str]) -> None:
    found = _nearest(library, unit([1.0, 0.0]))
    assert [card_id for card_id, _ in found] == [cards["same"], cards["close"], cards["far"], cards["opposite"]]
    similarities = [similarity for _, similarity in found]
    assert similarities == pytest.approx([1.0, math.cos(0.3), math.cos(1.2), -1.0], abs=0.02)
    assert [card_id for card_id, _ in _nearest(library, unit([1.0, 0.0]), limit=2)] == [cards["same"], cards["close"]]


def test_an_excluded_card_and_a_removed_vector_are_not_found(library: Database, cards: dict[str, str]) -> None:
    found = _nearest(library, unit([1.0, 0.0]), limit=2, exclude=(cards["same"],))
    assert [card_id for card_id, _ in found] == [cards["close"], cards["far"]]
    drop_vector(library, cards["close"])
    # (the in-memory index may still hold a removed vector until it is loaded again: the ids found are checked
    # against the table, as the search does)
    found_ids = [card_id for card_id, _ in _nearest(library, unit([1.0, 0.0]), limit=3)]
    with library.engine.connect() as conn:
        live = backend_of(conn).search.live_in_space(conn, found_ids, MODEL)
    assert [card_id for card_id in found_ids if card_id in live][:2] == [cards["same"], cards["far"]]


def test_a_space_of_another_model_is_never_compared(library: Database, cards: dict[str, str]) -> None:
    stranger = add_card(library, "A stranger", "Embedded by another model.")
    add_vector(library, stranger, unit([1.0, 0.0]), model="another-model")
    assert stranger not in {card_id for card_id, _ in _nearest(library, unit([1.0, 0.0]))}
    with library.engine.connect() as conn:
        assert [card_id for card_id, _ in nearest(conn, "another-model", unit([1.0, 0.0]), 10)] == [stranger]


def test_warming_up_makes_every_vector_of_a_model_ready(library: Database, cards: dict[str, str]) -> None:
    with library.engine.connect() as conn:
        assert warm_up(conn, MODEL) == len(cards)
    assert _nearest(library, unit([math.cos(1.2), math.sin(1.2)]), limit=1)[0][0] == cards["far"]
