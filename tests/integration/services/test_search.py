"""Search by words and by meaning, across languages, over the scrap's whole text: a Korean query finds the
English card on its topic first and the other way round, a word that is only in a scrap's text finds its
card, and each result says where it matched."""

from __future__ import annotations

import pytest

from san_desktop.app import SanApp
from san_desktop.services.search import BY_MEANING, IN_CARD, IN_TEXT
from tests.integration.services.test_similar_meaning import ENGLISH, KOREAN
from tests.support.til import cards_of

# a long scrap whose card (title, summary, tags) cannot hold every word of it
LONG = (
    "Notes from the database reading group.\n\n"
    + " ".join(f"Paragraph {n} about SQLite pages and the write-ahead log." for n in range(30))
    + " At the very end someone mentioned the zymurgy club, which has nothing to do with it."
)


@pytest.fixture
def library(app: SanApp) -> dict[str, str]:
    cards_of(app, [*ENGLISH.values(), *KOREAN.values(), LONG])
    by_text = {app.cards.get(card.id).content: card.id for card in app.cards.list_cards()}
    named = {f"en:{topic}": by_text[text] for topic, text in ENGLISH.items()}
    named |= {f"ko:{topic}": by_text[text] for topic, text in KOREAN.items()}
    named["long"] = by_text[LONG]
    return named


def test_a_korean_query_finds_the_english_card_on_its_topic_first_and_the_other_way_round(
    app: SanApp, library: dict[str, str]
) -> None:
    english = {card_id for key, card_id in library.items() if key.startswith("en:")}
    korean = {card_id for key, card_id in library.items() if key.startswith("ko:")}
    found = app.cards.search("트랜잭션 격리")
    first_english = next(item for item in found if item.card.id in english)
    assert first_english.card.id == library["en:isolation"]
    assert first_english.matched == (BY_MEANING,)
    found = app.cards.search("lost update between two transactions")
    first_korean = next(item for item in found if item.card.id in korean)
    assert first_korean.card.id == library["ko:isolation"]
    assert BY_MEANING in first_korean.matched


def test_a_word_only_in_the_scraps_text_finds_its_card_and_says_so(app: SanApp, library: dict[str, str]) -> None:
    card = app.cards.get(library["long"]).card
    assert "zymurgy" not in f"{card.title} {card.summary} {' '.join(card.tags)}".casefold()
    (found,) = [item for item in app.cards.search("zymurgy") if IN_TEXT in item.matched]
    assert found.card.id == library["long"]
    assert IN_CARD not in found.matched
    assert app.cards.cards_of_scraps([card.scrap_id], "zymurgy").keys() == {card.scrap_id}  # live updates agree


def test_a_korean_word_is_found_in_the_text_with_its_particle(app: SanApp, library: dict[str, str]) -> None:
    found = app.cards.search("현상액")  # written "현상액의" in the scrap
    assert found[0].card.id == library["ko:film"]
    assert IN_TEXT in found[0].matched


def test_a_search_that_means_nothing_here_finds_nothing(app: SanApp, library: dict[str, str]) -> None:
    assert app.cards.search("zebra crossing") == []
    assert app.cards.list_cards("zebra crossing") == []
