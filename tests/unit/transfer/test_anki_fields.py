"""What the Anki export makes of names and text: deck names and ids, tags, fields."""

from __future__ import annotations

from datetime import UTC, datetime

from san_desktop.transfer.anki_export import anki_tag, deck_id, deck_name, field_text
from san_desktop.transfer.library import ExportCard

NOW = datetime(2026, 12, 5, tzinfo=UTC)


def _card(category: str | None) -> ExportCard:
    return ExportCard("c1", "제목", "요약", category, (), "TEXT", None, NOW, NOW, NOW)


def test_a_deck_per_category_under_san_and_one_for_cards_without() -> None:
    assert deck_name(_card("Databases")) == "SAN::Databases"
    assert deck_name(_card("AI/ML")) == "SAN::AI/ML"
    assert deck_name(_card(None)) == "SAN::Uncategorised"
    assert deck_name(_card("  ")) == "SAN::Uncategorised"
    assert deck_name(_card("C++::Templates")) == "SAN::C++:Templates"  # not a sub-deck


def test_a_decks_id_is_the_same_every_time_and_in_ankis_range() -> None:
    names = ["SAN::Databases", "SAN::데이터베이스", "SAN::Uncategorised"]
    ids = [deck_id(name) for name in names]
    assert ids == [deck_id(name) for name in names]
    assert len(set(ids)) == len(ids)
    assert all(1 << 30 <= ident < 1 << 31 for ident in ids)


def test_tags_lose_their_spaces_and_fields_are_escaped_html() -> None:
    assert anki_tag(" build cache ") == "build_cache"
    assert anki_tag("한국어\t태그") == "한국어_태그"
    assert field_text('a < b & "c"\n둘째 줄') == "a &lt; b &amp; &quot;c&quot;<br>둘째 줄"
